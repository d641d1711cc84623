import AssistantCore
import Testing

/// The classifier's tables. Each state-changing case names a fragment of the reason, so a case
/// fails when the rule that should refuse it is gone (another rule refusing it for a different
/// reason would not satisfy it).
@Suite struct CommandClassifierTests {
    static let readOnly: [String] = [
        // Plain programs of the allowlist.
        "ls", "ls -la /var/log", "ls -lah --color=never /etc", "cat /etc/os-release", "cat /proc/meminfo",
        "cat /proc/1/status", "head -n 50 /var/log/syslog", "head -20 /etc/passwd", "tail -n 100 /var/log/nginx/error.log",
        "tail -f /var/log/syslog", "wc -l /etc/passwd", "stat /etc/hosts", "df -h", "df -i /", "du -sh /var/lib/docker",
        "du -h --max-depth=1 /var", "free -m", "uptime", "uname -a", "id", "id deploy", "whoami", "hostname", "hostname -f",
        "hostname -I", "ps aux", "ps -eo pid,comm,%mem --sort=-%mem", "pgrep -a nginx", "grep -r error /var/log/nginx",
        "grep -i 'out of memory' /var/log/kern.log", "egrep 'a|b' file", "fgrep -x root /etc/passwd", "zgrep error /var/log/syslog.2.gz",
        "rg -n TODO /srv/app", "rg --files /etc", "find /var/log -name '*.gz' -mtime +7", "find / -xdev -type f -size +100M",
        "find . -maxdepth 2 -print", "find /etc -newer /etc/hosts -print0", "sort -n sizes.txt", "sort -k2 -t: /etc/passwd",
        "sort -rn", "uniq -c", "uniq counts.txt", "cut -d: -f1 /etc/passwd", "tr a-z A-Z", "echo hello", "echo 'a b' \"c d\"",
        "printf \"%s\\n\" x", "date", "date +%s", "date -u '+%Y-%m-%d'", "test -f /etc/hosts", "[ -d /var/log ]", "true", "false",
        "which nginx", "type ls", "file /bin/ls", "md5sum /etc/hosts", "sha256sum -c SHA256SUMS", "lsblk", "lsblk -f",
        "findmnt", "mount", "dmesg", "dmesg -T --level=err", "dmesg --since '1 hour ago'", "ss -tulpn", "ss -s", "netstat -tlnp",
        "lsof -i :443", "vmstat 1 5", "iostat -x", "w", "who", "last -n 20", "nproc", "lscpu", "getent passwd root",
        "printenv", "printenv PATH", "env", "pwd", "cd /var/log && ls", "basename /a/b", "readlink -f /etc/localtime",
        "tree -L 2 /etc/nginx", "base64 -d token.txt", "xxd /bin/true", "jq . /etc/docker/daemon.json", "sysctl -a",
        "sysctl vm.swappiness", "top -b -n 1", "top -bn1", "top -n 1 -b", "journalctl -u nginx --since today",
        "journalctl -xe --no-pager", "journalctl -p err -b", "journalctl --disk-usage", "journalctl -f",
        // sed: -n with print-only scripts.
        "sed -n 1p /etc/passwd", "sed -n '1,20p' /var/log/syslog", "sed -n '$p' file", "sed -n '/error/p' log",
        "sed -n -e 5p -e 10p file", "sed -ne '2,4p' file", "sed --quiet 10p file", "sed -n '1p;3p' file", "sed -nE '/a/p' f",
        // Subcommand screens.
        "systemctl status nginx", "systemctl --no-pager status nginx", "systemctl is-active nginx", "systemctl is-enabled sshd",
        "systemctl list-units --failed", "systemctl list-timers --all", "systemctl show -p ActiveState nginx",
        "systemctl cat nginx.service", "systemctl", "systemctl --type=service list-units", "systemctl -t service list-units",
        "ip addr", "ip a", "ip addr show", "ip addr show dev eth0", "ip route", "ip route show table main", "ip -br link",
        "ip -4 -o addr show", "ip link show eth0", "ip neigh", "ip rule list",
        "docker ps", "docker ps -a --format '{{.Names}}'", "docker images", "docker logs --tail 100 web", "docker logs -f web",
        "docker inspect web", "docker stats --no-stream", "docker container ls", "docker image ls", "docker -H unix:///run/docker.sock ps",
        "docker --context prod ps", "docker version", "podman ps", "podman logs web",
        "kubectl get pods", "kubectl get pods -A -o wide", "kubectl -n prod get deploy", "kubectl --namespace=prod describe pod web-1",
        "kubectl logs web-1 --tail=50", "kubectl top nodes", "kubectl --context staging get svc",
        "git branch", "git branch -a", "git branch --show-current", "git branch -vv", "git rev-parse HEAD", "git -C /srv/app rev-parse HEAD",
        "git --no-pager describe --tags", "git describe", "git rev-parse --show-toplevel",
        // `--` ends the options: what follows is counted as operands.
        "uniq -- counts.txt", "xxd -- /bin/true", "cat -- -weird-name", "grep -- -v file", "sed -n -- 1p file", "sed -n -e 1p -- file", "sed -n -- 1p -i",
        // Wrappers.
        "sudo ls /root", "sudo -u postgres ls 2>/dev/null || true", "sudo -u www-data cat /srv/app/.env",
        "sudo journalctl -u nginx", "sudo -H du -sh /root", "bash -c 'ls -la'", "bash -lc 'ps aux | grep nginx'", "sh -c 'df -h'",
        "bash -c 'cd /var/log && ls'", "bash -c \"bash -c 'uptime'\"", "zsh -c uptime", "dash -c 'id'",
        "timeout 5 tail -f /var/log/syslog", "timeout -s KILL 10s journalctl -f", "timeout 2.5 uptime", "nice -n 10 du -sh /var",
        "nice du -sh /", "nice -10 ls", "nice", "ionice -c 3 du -sh /var", "command -v nginx", "command ls", "exec uptime",
        "env -i ls", "env -u HOME ls", "sudo timeout 5 nice ls", "env",
        // Lists, pipelines and the harmless redirections.
        "uptime && free -m", "ls || true", "df -h; free -m", "ps aux | grep nginx | head -5", "ls;",
        "find / -name core 2>/dev/null", "ls 2>&1 | head", "ls >/dev/null 2>&1", "journalctl -u x 2> /dev/null | tail",
        "grep x f >>/dev/null", "ls >&2",
        // Quoting and globs for programs that accept them.
        "cat /var/log/*.log", "ls -d /etc/ssh/ssh_host_*", "du -sh /var/*", "grep -r x /etc/nginx/sites-*", "ls ~", "ls ~/logs",
        "echo \"a\\\"b\"", "echo a\\ b", "''ls", "l's'", "\"ls\" -l", "grep '^root:' /etc/passwd", "echo ''", "wc -l /dev/null || true", "sed -n /etc/hosts -e 1p", "sudo -u root -- ls",
    ]

    @Test(arguments: readOnly)
    func provenReadOnly(_ command: String) {
        #expect(CommandClassifier.classify(command) == .readOnly, "\(command)")
    }

    static let stateChanging: [(String, String)] = [
        // Programs not on the list, and the ones refused on purpose.
        ("rm -rf /tmp/x", "'rm' is not a known read-only program"), ("rm -fr /", "'rm'"), ("rm --recursive --force /", "'rm'"),
        ("systemctl restart nginx", "'systemctl restart' is not a read-only subcommand"), ("apt-get install -y nginx", "'apt-get'"),
        ("reboot", "'reboot'"), ("python3 x.py", "'python3'"), ("awk '{print $1}' f", "awk programs can run commands"), ("awk '{print}' f", "awk programs can run commands"),
        ("tee /etc/motd", "tee writes"), ("echo x | tee -a f", "tee writes"), ("dd if=/dev/zero of=/dev/sda", "dd writes"),
        ("curl -o x https://e.com", "curl has network side effects"), ("wget https://e.com", "wget"), ("ls | xargs rm", "xargs runs a command"),
        ("find . | xargs grep x", "xargs"), ("nohup ls", "nohup writes nohup.out"), ("less /etc/hosts", "pager"), ("more f", "pager"),
        ("watch df", "watch runs"), ("time ls", "'time' is a shell keyword"), ("vi /etc/hosts", "'vi'"), ("chmod 777 /", "'chmod'"),
        ("kill 1", "'kill'"), ("pkill nginx", "'pkill'"), ("fish -c ls", "'fish'"), ("ksh -c ls", "'ksh'"), ("stdbuf -o0 ls", "'stdbuf'"),
        ("busybox ls", "'busybox'"), ("ｌｓ", "is not a known read-only program"),
        // Per-program unsafe options.
        ("find / -name '*.log' -delete", "'find -delete'"), ("find . -exec rm {} \\;", "'{'"), ("find . -exec rm '{}' ';'", "'find -exec'"),
        ("find . -execdir rm x ';'", "'find -execdir'"), ("find . -ok rm x ';'", "'find -ok'"), ("find . -okdir rm x ';'", "'find -okdir'"),
        ("find . -fprint out", "'find -fprint'"), ("find . -fprint0 out", "'find -fprint0'"), ("find . -fprintf out %p", "'find -fprintf'"),
        ("find . -fls out", "'find -fls'"), ("find /var -name *.log", "the glob '*.log' in the arguments of 'find'"),
        ("sed -i s/a/b/ f", "'sed -i' edits files"), ("sed -ni 1p f", "'sed -i'"), ("sed --in-place -n 1p f", "'sed --in-place'"),
        ("sed --in -n 1p f", "'sed --in-place'"), ("sed -n -f script f", "'sed -f'"), ("sed 1p f", "'sed' without -n"),
        ("sed -n 's/a/b/w out' f", "is not print-only"), ("sed -n '1w out' f", "is not print-only"), ("sed -n '1e id' f", "is not print-only"),
        ("sed -n 'p;W out' f", "is not print-only"), ("sed -n '/a\\/b/p' f", "backslash inside single quotes"), ("sed -n", "'sed' without a script"),
        ("sed -n 1p /etc/*", "the glob"), ("sed -n --follow-symlinks 1p f", "'sed --follow-symlinks'"),
        ("sort -o out in", "'sort -o'"), ("sort -no out in", "'sort -o'"), ("sort --output=out in", "'sort --output'"), ("sort in --out=x", "'sort --output'"),
        ("sort --compress-program=sh in", "'sort --compress-program'"), ("sort *.txt", "the glob"), ("uniq in out", "'uniq' with more than 1 operand"),
        ("rg --pre sh x", "'rg --pre'"), ("rg --pre=sh x", "'rg --pre'"), ("rg -z x", "'rg -z'"), ("rg --search-zip x", "'rg --search-zip'"),
        ("rg --hostname-bin=h x", "'rg --hostname-bin'"), ("base64 -o out in", "'base64 -o'"), ("tree -o out /", "'tree -o'"),
        ("file -C -m magic", "'file -C'"), ("printf -v x hi", "'printf -v'"), ("date -s '2026-01-01'", "'date -s'"), ("date --set=now", "'date --set'"),
        ("date 010100002026", "only +FORMAT"), ("hostname evil", "'hostname' with an operand"), ("hostname -F /etc/x", "'hostname -F'"),
        ("hostname -b x", "'hostname -b'"), ("sysctl -w vm.swappiness=1", "'sysctl -w'"), ("sysctl vm.swappiness=1", "writes a setting"),
        ("sysctl -p", "'sysctl -p'"), ("sysctl --system", "'sysctl --system'"), ("mount /dev/sdb1 /mnt", "'mount' with an operand"),
        ("mount -a", "'mount -a' is not a proven read-only option"), ("top", "'top' is read-only here only with -b -n"), ("top -b", "with -b -n"),
        ("top -n 1", "with -b -n"), ("ss -K dst 1.2.3.4", "'ss -K'"), ("ss --kill", "'ss --kill'"), ("ss -D out", "'ss -D'"),
        ("dmesg -c", "'dmesg -c'"), ("dmesg -C", "'dmesg -C'"), ("dmesg --clear", "'dmesg --clear'"), ("dmesg -D", "'dmesg -D'"),
        ("dmesg -E", "'dmesg -E'"), ("dmesg -n 1", "'dmesg -n'"), ("dmesg --console-level 1", "'dmesg --console-level'"),
        ("journalctl --rotate", "'journalctl --rotate'"), ("journalctl --vacuum-size=1G", "'journalctl --vacuum-size'"),
        ("journalctl --vacuum-time=1d", "'journalctl --vacuum-time'"), ("journalctl --vacuum-files=2", "'journalctl --vacuum-files'"),
        ("journalctl --flush", "'journalctl --flush'"), ("journalctl --setup-keys", "'journalctl --setup-keys'"),
        ("journalctl --cursor-file=/tmp/c", "'journalctl --cursor-file'"), ("journalctl --vac", "'journalctl --vacuum-size'"),
        ("xxd -r hex out", "'xxd -r'"), ("xxd in out", "'xxd' with more than 1 operand"),
        // Subcommand screens.
        ("systemctl stop nginx", "'systemctl stop'"), ("systemctl enable --now x", "'systemctl enable'"), ("systemctl daemon-reload", "'systemctl daemon-reload'"),
        ("systemctl -H host status", "the option '-H' before the subcommand"), ("systemctl --type restart x", "'systemctl x'"),
        ("systemctl --lines 5 restart x", "'systemctl restart'"),
        ("ip link set eth0 down", "'ip link set'"), ("ip addr add 1.2.3.4/24 dev eth0", "'ip addr add'"), ("ip route flush all", "'ip route flush'"),
        ("ip link s eth0 down", "'ip link s'"), ("ip -batch f", "the option '-batch'"), ("ip netns exec x sh", "'ip netns'"),
        ("docker rm -f web", "'docker rm'"), ("docker exec web sh", "'docker exec'"), ("docker run alpine", "'docker run'"),
        ("docker stats", "'docker stats' is read-only here only with --no-stream"), ("docker container rm x", "'docker container rm'"),
        ("docker --config /tmp/x ps", "the option '--config'"), ("docker -H tcp://x rm y", "'docker rm'"), ("podman rm x", "'podman rm'"),
        ("docker image rm x", "'docker image rm'"), ("docker system prune -f", "'docker system'"),
        ("kubectl delete pod x", "'kubectl delete'"), ("kubectl exec -it x -- sh", "'kubectl exec'"), ("kubectl apply -f x.yaml", "'kubectl apply'"),
        ("kubectl edit deploy x", "'kubectl edit'"), ("kubectl --user get delete pods", "'kubectl delete'"), ("kubectl -n get delete x", "'kubectl delete'"),
        ("kubectl get pods --kubeconfig=/tmp/k", "'kubectl get --kubeconfig'"), ("kubectl --kubeconfig /tmp/k get pods", "the option '--kubeconfig'"),
        ("kubectl rollout restart deploy/x", "'kubectl rollout'"),
        ("git -c core.pager=sh log", "'git -c'"), ("git --config-env=core.pager=X log", "'git --config-env'"), ("git -ccore.x=y log", "the option '-ccore.x=y'"),
        ("git push", "'git push'"), ("git reset --hard", "'git reset'"), ("git checkout -- .", "'git checkout'"), ("git clean -fdx", "'git clean'"),
        ("git log --output=/tmp/x", "'git log' runs programs"), ("git diff --output /etc/x", "'git diff' runs programs"), ("git diff --ext-diff", "'git diff' runs programs"),
        ("git log --textconv", "'git log' runs programs"), ("git rev-parse --out=x", "'git rev-parse --output'"), ("git -p log", "the option '-p'"),
        ("git --paginate log", "the option '--paginate'"), ("git branch -d x", "'git branch -d'"), ("git branch -D x", "'git branch -D'"),
        ("git branch -m a b", "'git branch -m'"), ("git branch newbranch", "'git branch' with an operand"), ("git stash drop", "'git stash'"),
        ("git -C /srv/* status", "the glob"),
        // Wrappers.
        ("sudo -n ls", "'sudo -n' is never read-only"), ("sudo -nu root ls", "'sudo -n'"), ("sudo --non-interactive ls", "'sudo -n'"),
        ("sudo rm -rf /", "'rm'"), ("sudo -s", "'sudo -s'"), ("sudo -i ls", "'sudo -i'"), ("sudo -e /etc/hosts", "'sudo -e'"), ("sudo", "'sudo' without a command"),
        ("sudo -u root", "'sudo' without a command"), ("sudo sudo -n ls", "'sudo -n'"),
        ("bash -c 'rm -rf /tmp/x'", "'rm'"), ("bash -c 'ls > f'", "output redirection"), ("bash script.sh", "runs a script file"),
        ("bash", "runs a script file"), ("sh -x -c ls", "'sh -x'"), ("bash -c \"ls; rm -rf x\"", "'rm'"), ("bash -c *", "the glob"),
        ("bash -c 'bash -c \"reboot\"'", "'reboot'"),
        ("env X=1 ls", "'env X=…'"), ("env LD_PRELOAD=/tmp/evil.so ls", "'env LD_PRELOAD=…'"), ("env -S 'rm x'", "'env -S'"),
        ("env rm x", "'rm'"), ("env -i rm x", "'rm'"), ("timeout 5 rm x", "'rm'"), ("timeout rm x", "'timeout' without a duration"),
        ("timeout 5", "'timeout' without a command"), ("timeout --foo 5 ls", "'timeout --foo'"), ("nice rm x", "'rm'"), ("nice -n 5 reboot", "'reboot'"),
        ("ionice -p 1 -c 3", "'ionice -p'"), ("ionice -c3 rm x", "'rm'"), ("command rm x", "'rm'"), ("exec rm x", "'rm'"), ("exec -a x ls", "'exec -a'"),
        ("sudo bash -c 'systemctl restart x'", "'systemctl restart'"), ("timeout 5 sudo -n ls", "'sudo -n'"),
        // Syntax outside the subset.
        ("ls > out", "output redirection '>' to a file"), ("ls >> out", "to a file"), ("ls >| out", "'>|'"), ("ls &> out", "'&>'"),
        ("ls 2> err", "to a file"), ("ls 1>/dev/nullx", "to a file"), ("ls >&out", "file descriptor number"), ("ls >& 1", "file descriptor number"),
        ("cat < /etc/passwd", "'<'"), ("cat <> f", "'<'"), ("cat <<EOF", "'<'"), ("cat <<< x", "'<'"), ("cat <(ls) foo", "'<'"),
        ("echo $(id)", "'$'"), ("echo `id`", "command substitution"), ("echo \"$(id)\"", "'$' inside double quotes"), ("echo \"`id`\"", "command substitution"),
        ("echo $HOME", "'$'"), ("$CMD", "'$'"), ("${X}", "'$'"), ("echo $'\\x41'", "'$'"), ("echo $\"x\"", "'$'"), ("echo $((1+1))", "'$'"),
        ("(ls)", "'('"), ("{ cat foo; }", "'{'"), ("echo {a,b}", "'{'"), ("f() { ls; }", "'('"), ("ls &", "background"),
        ("ls & rm x", "background"), ("! ls", "'!' at the start"), ("ls |& cat", "'|&'"), ("ls ;; ls", "'case' terminator"),
        ("ls\nrm x", "U+000A"), ("ls\rrm x", "U+000D"), ("ls\u{0}rm", "U+0000"), ("ls\u{1B}[2J", "U+001B"), ("ls\u{202E}x", "U+202E"),
        ("ls\u{200B}", "U+200B"), ("ls\u{A0}-la", "U+00A0"), ("ls\u{2028}x", "U+2028"), ("ls\u{FEFF}", "U+FEFF"),
        ("X=1 ls", "the variable assignment 'X=…'"), ("PAGER=sh git log", "'PAGER=…'"), ("*", "the glob '*' in place of the program"),
        ("l? -la", "the glob"), ("/bin/rm -rf x", "given by path"), ("./ls", "given by path"), ("/usr/bin/ls", "given by path"),
        ("'r''m' -rf x", "'rm'"), ("\\rm -rf x", "a backslash before a letter"), ("r\\m -rf x", "a backslash before a letter"), ("sort \\x2do out f", "a backslash before a letter"), ("\\ls", "a backslash before a letter"), ("\"rm\" x", "'rm'"),
        ("echo 'a\\' '; rm -rf / #'", "a backslash inside single quotes"), ("echo 'unterminated", "unterminated single quote"),
        ("echo \"unterminated", "unterminated double quote"), ("ls \\", "trailing backslash"), ("ls # ; rm -rf /", "'#' at the start"),
        ("", "an empty command"), ("   ", "an empty command"), ("&& ls", "an empty command before '&&'"), ("ls &&", "an empty command"),
        ("ls | ", "an empty command"), ("; ls", "an empty command before ';'"),
        ("ls " + String(repeating: "a", count: 8200), "longer than 8192 bytes"),
        // The Claude Code bypasses of research section 2.3, and Codex's cases of 2.1.
        ("cd /p && python3 x.py", "'python3'"), ("rm -rfv /", "'rm'"), ("cat foo; echo x >> foo", "to a file"),
        ("aws s3 rm s3://b --recursive", "'aws'"), ("VAR=x aws s3 ls", "'VAR=…'"), ("find . -exec grep secret '{}' +", "'find -exec'"),
        ("git rev-parse HEAD && git push", "'git push'"), ("git branch; rm -rf .", "'rm'"), ("ls && { rm x; }", "'{'"),
        ("uptime || reboot", "'reboot'"), ("ps aux | sh", "'sh' without '-c SCRIPT'"), ("ls | bash", "runs a script file"),
        ("noglob rm x", "'noglob'"), ("builtin rm x", "'builtin'"),
        // Every remaining unsafe option of the table, once each.
        ("base64 --output=f x", "'base64 --output'"), ("dmesg --console-off", "'dmesg --console-off'"),
        ("dmesg --console-on", "'dmesg --console-on'"), ("dmesg --read-clear", "'dmesg --read-clear'"),
        ("docker container stats", "'docker container stats' is read-only here only with --no-stream"),
        ("podman stats", "'podman stats' is read-only here only with"), ("podman container stats x", "'podman container stats' is read-only here only with"),
        ("file --compile -m m", "'file --compile'"), ("git describe --output=x", "'git describe --output'"), ("git rev-parse --output=x", "'git rev-parse --output'"), ("git shortlog --output=x", "'git shortlog' runs programs"),
        ("hostname --boot x", "'hostname --boot'"), ("hostname --file=/x", "'hostname --file'"),
        ("journalctl --relinquish-var", "'journalctl --relinquish-var'"), ("journalctl --smart-relinquish-var", "'journalctl --smart-relinquish-var'"),
        ("journalctl --sync", "'journalctl --sync'"), ("journalctl --update-catalog", "'journalctl --update-catalog'"),
        ("kubectl describe pod x --kubeconfig=/k", "'kubectl describe --kubeconfig'"), ("kubectl logs x --kubeconfig /k", "'kubectl logs --kubeconfig'"),
        ("kubectl top pod --kubeconfig=/k", "'kubectl top --kubeconfig'"), ("kubectl version --kubeconfig=/k", "'kubectl version --kubeconfig'"),
        ("kubectl explain pods --kubeconfig=/k", "'kubectl explain --kubeconfig'"), ("kubectl api-resources --kubeconfig=/k", "'kubectl api-resources --kubeconfig'"),
        ("kubectl api-versions --kubeconfig=/k", "'kubectl api-versions --kubeconfig'"),
        ("ss --diag=f", "'ss --diag'"), ("sysctl --load=/etc/x", "'sysctl --load'"), ("sysctl --write a=1", "'sysctl --write'"),
        ("sysctl -f /etc/x", "'sysctl -f'"), ("xxd --revert h", "'xxd --revert'"), ("gawk 'BEGIN{}'", "'gawk': awk programs"),
        ("mawk 1 f", "'mawk': awk programs"),
        // After `--` the words are operands, counted as the program counts them (red team, issue 27).
        ("sed -n -- 'w /tmp/x' -e 1p", "the sed script 'w /tmp/x' is not print-only"), ("uniq -- a -mX", "more than 1 operand"),
        ("xxd -- a -mX", "more than 1 operand"), ("hostname -- -name", "with an operand ('-name')"), ("sort -- a -o x", "'sort -o'"),
        ("date -- 0101000026", "only +FORMAT"),
        // Git reads the repository's own configuration, which can name programs to run.
        ("git status", "'git status' runs programs the repository's own configuration can name"),
        ("git -C /srv/app status", "'git status' runs programs"), ("git log --oneline -20", "'git log' runs programs"),
        ("git diff HEAD~1", "'git diff' runs programs"), ("git show HEAD", "'git show' runs programs"),
        ("git --no-pager log -5", "'git log' runs programs"), ("git blame README.md", "'git blame' runs programs"),
        ("git ls-files", "'git ls-files' runs programs"), ("git ls-files -s", "'git ls-files' runs programs"),
        ("git rev-parse :README", "reads the index, which runs the repository's core.fsmonitor"), ("git describe --dirty", "'git describe --dirty'"),
        ("git shortlog -s", "'git shortlog' runs programs"), ("sort ^a", "the glob '^a'"), ("sort [ab]", "the glob '[ab]'"), ("sort a?", "the glob 'a?'"), ("tree -R -H x .", "'tree -R'"),
    ]

    @Test(arguments: stateChanging)
    func notProvenReadOnly(_ command: String, _ reasonFragment: String) {
        guard case .mayChangeState(let reason) = CommandClassifier.classify(command) else {
            Issue.record("classified read-only: \(command)")
            return
        }
        #expect(reason.contains(reasonFragment), "\(command): \(reason)")
    }

    @Test func reasonsAreOneLineAndShort() {
        for (command, _) in Self.stateChanging {
            guard case .mayChangeState(let reason) = CommandClassifier.classify(command) else { continue }
            #expect(!reason.contains("\n") && reason.count < 240, "\(reason)")
        }
    }

    @Test func theTablesAreLarge() {
        #expect(Self.readOnly.count + Self.stateChanging.count >= 400)
    }

    /// Issue 27 item 3, as a property over the whole table: for every program the classifier
    /// allows, each of its state-changing options (short letters, long options and their
    /// prefixes, exact words) is refused wherever it stands: first, after an operand (getopt
    /// permutes), after `--` and before it; and an operand past a program's limit is refused
    /// too, also when it looks like an option and follows `--`.
    @Test func everyStateChangingFlagAndOperandIsRefusedWithAndWithoutDoubleDash() {
        var tried = 0
        for (program, rule) in ReadOnlyPrograms.rules where rule.subcommands == nil {
            var flags = rule.unsafeShort.map { "-\($0)" } + rule.unsafeLong + rule.unsafeWords
            flags += rule.unsafeLong.filter { $0.count > 4 }.map { String($0.prefix($0.count - 1)) }   // a getopt prefix
            for flag in flags {
                for command in ["\(program) \(flag) x", "\(program) x \(flag)", "\(program) -- \(flag) x", "\(program) \(flag) -- x"] {
                    tried += 1
                    #expect(CommandClassifier.classify(command) != .readOnly, "read-only: \(command)")
                }
            }
            if case .atMost(let limit) = rule.operands {
                // One operand too many: a plain word, or after `--` one that looks like an option
                // (before `--` that word would be an option, an invalid one for these programs).
                let operands = Array(repeating: "f", count: limit)
                for command in ["\(program) \((operands + ["out"]).joined(separator: " "))", "\(program) -- \((operands + ["-mX"]).joined(separator: " "))"] {
                    tried += 1
                    #expect(CommandClassifier.classify(command) != .readOnly, "read-only: \(command)")
                }
            }
        }
        #expect(tried > 150)
    }

    @Test func nestingDeeperThanTheBoundIsRefused() {
        let deep = String(repeating: "timeout 5 ", count: CommandClassifier.maxDepth + 2) + "ls"
        #expect(CommandClassifier.classify(deep) == .mayChangeState(reason: "wrappers nested more than \(CommandClassifier.maxDepth) deep"))
        #expect(CommandClassifier.classify(String(repeating: "timeout 5 ", count: 3) + "ls") == .readOnly)
    }
}
