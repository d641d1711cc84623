// termhost-classifier-bench: how many ssh_exec commands per second the read-only classifier
// (and the command family) gets through, over a mixed corpus: short reads, pipelines, wrapped and
// nested commands, state-changing commands refused early and late, and a command near the 8 KiB
// bound. Build with -c release: swift run -c release termhost-classifier-bench [rounds]
import AssistantCore

let corpus: [String] = [
    "ls -la /var/log", "df -h && free -m", "uptime", "ps aux | grep nginx | head -5", "cat /proc/meminfo",
    "journalctl -u nginx --since today --no-pager | tail -n 200", "systemctl status nginx", "systemctl restart nginx",
    "find / -xdev -type f -size +100M 2>/dev/null", "find /tmp -name '*.log' -delete", "sed -n '1,20p;/error/p' /var/log/syslog",
    "sed -i s/a/b/ /etc/hosts", "kubectl -n prod get pods -o wide", "kubectl delete pod web-1", "docker ps -a", "docker stats --no-stream",
    "git -C /srv/app log --oneline -20", "git -c core.pager=sh log", "sudo journalctl -u sshd", "sudo -n systemctl restart sshd",
    "bash -lc 'cd /var/log && ls -la | sort -k5 -n | tail'", "timeout 5 nice -n 10 du -sh /var/*", "env LD_PRELOAD=/tmp/x.so ls",
    "echo $(id)", "cat /etc/passwd > /tmp/x", "apt-get install -y nginx", "rm -rf /tmp/build", "ip -br addr show",
    "ss -tulpn | grep :443", "dmesg -T --level=err,warn | tail -50",
    "grep -rn 'timeout' " + Array(repeating: "/etc/nginx/sites-enabled/site.conf", count: 200).joined(separator: " "),
]
let rounds = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 2_000
let bytes = corpus.reduce(0) { $0 + $1.utf8.count }
var readOnly = 0
var families = 0

@inline(never) func measure(_ label: String, _ body: () -> Void) {
    for _ in 0..<max(rounds / 20, 1) { body() }   // warm up
    let clock = ContinuousClock()
    let elapsed = clock.measure { for _ in 0..<rounds { body() } }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let perSecond = Double(rounds * corpus.count) / seconds
    let microseconds = seconds * 1e6 / Double(rounds * corpus.count)
    print("  \(label): \(Int(perSecond)) commands/s (\((microseconds * 100).rounded() / 100) µs per command)")
}

print("Classifier throughput: \(corpus.count) commands (\(bytes) bytes) x \(rounds) rounds, release build")
measure("CommandClassifier.classify") {
    for command in corpus where CommandClassifier.classify(command) == .readOnly { readOnly += 1 }
}
measure("CommandFamily.of          ") {
    for command in corpus where CommandFamily.of(command) != nil { families += 1 }
}
print("  (\(readOnly / (rounds + max(rounds / 20, 1))) of \(corpus.count) proven read-only; \(families / (rounds + max(rounds / 20, 1))) with a family)")
