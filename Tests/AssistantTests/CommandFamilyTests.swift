import AssistantCore
import Testing

@Suite struct CommandFamilyTests {
    static let families: [(String, String)] = [
        ("systemctl restart nginx", "systemctl restart"), ("systemctl restart sshd", "systemctl restart"),
        ("systemctl --no-pager status nginx", "systemctl status"), ("apt-get install -y nginx", "apt-get install"),
        ("apt-get -y install nginx", "apt-get install"), ("rm -rf /tmp/x", "rm"), ("ls -la", "ls"),
        ("sudo systemctl restart nginx", "sudo systemctl restart"), ("sudo -n systemctl restart nginx", "sudo systemctl restart"),
        ("sudo -u postgres psql", "sudo psql"), ("timeout 30 apt-get update", "apt-get update"), ("nice -n 5 make install", "make install"),
        ("env -i systemctl status x", "systemctl status"), ("command docker ps", "docker ps"), ("exec reboot", "reboot"),
        ("bash -lc 'systemctl reload nginx'", "systemctl reload"), ("sh -c 'apt-get update && apt-get upgrade -y'", "apt-get update && apt-get upgrade"),
        ("kubectl -n prod delete pod web-1", "kubectl delete"), ("kubectl --namespace=prod rollout restart deploy/x", "kubectl rollout restart"),
        ("docker container rm -f web", "docker container rm"), ("docker -H tcp://h rm web", "docker rm"), ("docker compose up -d", "docker compose up"),
        ("git -C /srv/app pull", "git -C /srv/app pull"), ("git stash drop", "git stash drop"), ("ip link set eth0 down", "ip link set"),
        ("ip -br addr", "ip addr"), ("git status && git push", "git status && git push"), ("ps aux | grep x", "ps | grep"),
        ("uptime; reboot", "uptime ; reboot"), ("systemctl", "systemctl"), ("nginx -s reload", "nginx reload"),
        ("/usr/sbin/nginx -t", "/usr/sbin/nginx"), ("env", "env"),
        // Interpreters and programs whose arguments run or write: the exact command.
        ("python3 -c 'print(1)'", "python3 -c 'print(1)'"), ("find / -name core", "find / -name core"),
        ("sudo perl -e 'print 1'", "sudo perl -e 'print 1'"), ("bash -c \"awk '{print \\$1}' f\"", "awk '{print $1}' f"),
        ("git push --force origin main", "git push --force origin main"), ("make install", "make install"),
        ("git -c core.pager=sh log", "git -c core.pager=sh log"), ("docker run --rm -v /:/h alpine sh", "docker run --rm -v /:/h alpine sh"),
        ("kubectl -n prod exec web -- sh", "kubectl -n prod exec web -- sh"),
    ]

    @Test(arguments: families)
    func familyIsProgramPlusSubcommand(_ command: String, _ family: String) {
        #expect(CommandFamily.of(command) == family, "\(command)")
    }

    static let unparsable: [String] = [
        "echo x > /etc/motd", "X=1 make install", "env LD_PRELOAD=/tmp/x.so systemctl restart x", "$(curl x)", "rm -rf $HOME",
        "* -rf", "ls &", "sudo -s", "bash script.sh", "{ ls; }", "", "ls\nrm x",
        "kubectl --kubeconfig /tmp/k delete pod x",
    ]

    @Test(arguments: unparsable)
    func noFamilyForWhatCannotBeParsed(_ command: String) {
        #expect(CommandFamily.of(command) == nil, "\(command)")
    }

    /// Red team, issue 27: "always" for one Python snippet or one find search covered any other.
    @Test func anApprovalOfAnInterpreterOrFindCoversThatExactCommandOnly() {
        #expect(CommandFamily.of("python3 -c 'print(1)'") != CommandFamily.of("python3 -c 'import os; os.remove(\"/x\")'"))
        #expect(CommandFamily.of("find / -name x") != CommandFamily.of("find / -fprint /etc/cron.d/x"))
        #expect(CommandFamily.of("find . -name '*'") != CommandFamily.of("find . -name *"), "a quoted glob is not an unquoted one")
        #expect(CommandFamily.of("python3 -c \"print('a')\"") == "python3 -c 'print('\\''a'\\'')'")
        #expect(CommandFamily.of("systemctl restart nginx") == CommandFamily.of("systemctl restart sshd"), "other programs keep their families")
    }

    @Test func anApprovedFamilyDoesNotCoverACommandChainedAfterIt() {
        #expect(CommandFamily.of("git status && git push") != CommandFamily.of("git status"))
        #expect(CommandFamily.of("systemctl status x; rm -rf /") != CommandFamily.of("systemctl status x"))
    }
}
