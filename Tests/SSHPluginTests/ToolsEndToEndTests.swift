import Foundation
import Testing
import TestSupport

/// The SSH plugin's tools (list_hosts, ssh_exec) through `termhost tools call`, against a real
/// OpenSSH sshd on loopback.
@Suite struct SSHToolsEndToEndTests {
    /// The harness with its server saved as the host 'lab' (key file, tag 'web').
    static func lab(_ dir: TemporaryDirectory, trustServer: Bool = true, passphrase: String = "") throws -> SSHHarness {
        let h = try SSHHarness(dir: dir, passphrase: passphrase, trustServer: trustServer)
        let add = try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(),
                                  "--identity", h.key.privatePath, "--tag", "web"])
        #expect(add.status == 0, "\(add.output)")
        return h
    }

    static func call(_ h: SSHHarness, _ tool: String, _ arguments: String) throws -> Shell.Result {
        try h.termhost(["tools", "call", tool, arguments])
    }

    static func object(_ r: Shell.Result) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [String: Any] ?? [:]
    }

    static func arguments(_ values: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: values), as: UTF8.self)
    }

    @Test func listHostsShowsSavedHostsWithoutSecrets() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        let r = try Self.call(h, "list_hosts", "{}")
        #expect(r.status == 0, "\(r.output)")
        let hosts = Self.object(r)["hosts"] as? [[String: Any]] ?? []
        #expect(hosts.count == 1)
        #expect(hosts.first?["id"] as? String == "lab")
        #expect(hosts.first?["host_name"] as? String == "127.0.0.1")
        #expect(hosts.first?["user"] as? String == NSUserName())
        #expect(hosts.first?["port"] as? Int == h.server.port)
        #expect(hosts.first?["tags"] as? [String] == ["web"])
        #expect(!r.stdout.contains(h.key.privatePath), "a key's path is no business of the model's")
    }

    @Test func sshExecReturnsBothStreamsAndTheExitStatus() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        let r = try Self.call(h, "ssh_exec", Self.arguments(["host": "lab", "command": "echo out; echo err >&2; tty || true; exit 3"]))
        #expect(r.status == 0, "\(r.output)")
        let o = Self.object(r)
        #expect(o["exit_status"] as? Int == 3)
        #expect(o["stdout"] as? String == "out\nnot a tty\n", "a dedicated exec channel, never a PTY")
        #expect(o["stderr"] as? String == "err\n")
        #expect(o["stdout_omitted_bytes"] as? Int == 0)
        #expect(o["note"] is NSNull)
    }

    @Test func sshExecBoundsOutputAndSaysHowMuchItLeftOut() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        let r = try Self.call(h, "ssh_exec", Self.arguments(["host": "lab", "command": "head -c 5000 /dev/zero | tr '\\0' a; kill -TERM $$",
                                                              "max_output_bytes": 1000]))
        #expect(r.status == 0, "\(r.output)")
        let o = Self.object(r)
        #expect((o["stdout"] as? String)?.utf8.count == 1000)
        #expect(o["stdout_omitted_bytes"] as? Int == 4000)
        #expect(o["note"] as? String == "stdout: 4000 more bytes not shown")
        #expect(o["signal"] as? String == "TERM", "\(r.stdout)")
        #expect(o["exit_status"] is NSNull)
    }

    @Test func sshExecEndsACommandAtItsTimeout() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        let started = Date()
        let r = try Self.call(h, "ssh_exec", Self.arguments(["host": "lab", "command": "sleep 30", "timeout_seconds": 1]))
        #expect(r.status == 1, "\(r.output)")
        #expect(r.stderr.contains("did not finish within 1000 ms; its channel was closed (timeout_seconds 1)"), "\(r.stderr)")
        #expect(Date().timeIntervalSince(started) < 15)
    }

    @Test func sshExecRefusesTimeoutsOutOfRange() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        let r = try Self.call(h, "ssh_exec", Self.arguments(["host": "lab", "command": "true", "timeout_seconds": 601]))
        #expect(r.status == 2, "\(r.output)")
        #expect(r.stderr.contains("timeout_seconds"), "\(r.stderr)")
    }

    @Test func ctrlCEndsARunningSSHExecPromptlyAndTheRemoteCommandWithIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        // The server runs as this user on this machine: the remote shell's PID is visible here.
        let pidFile = dir.path + "/remote.pid"
        let command = "echo $$ > \(pidFile); while :; do echo tick; sleep 0.2; done"
        let run = try Background(Paths.termhost, ["tools", "call", "ssh_exec",
                                                  Self.arguments(["host": "lab", "command": command, "timeout_seconds": 120])],
                                 environment: h.environment)
        var pid: pid_t = 0
        #expect(Wait.until(timeout: 120) {
            pid = pid_t((try? String(contentsOfFile: pidFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
            return pid > 0
        }, "the command never started")
        let interrupted = Date()
        kill(run.process.processIdentifier, SIGINT)
        #expect(Wait.until(timeout: 10) { !run.process.isRunning }, "termhost tools call still runs after SIGINT")
        #expect(Date().timeIntervalSince(interrupted) < 5)
        if run.process.isRunning { run.process.terminate() }
        #expect(run.process.terminationStatus != 0)
        // Its channel was closed: the remote loop's next write fails and it ends.
        #expect(Wait.until(timeout: 10) { kill(pid, 0) != 0 }, "the remote command \(pid) still runs")
    }

    @Test func anUnknownHostKeyIsAnErrorThatSaysWhatToRunAndNothingIsAsked() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir, trustServer: false)
        defer { h.server.stop() }
        let r = try Self.call(h, "ssh_exec", Self.arguments(["host": "lab", "command": "true"]))
        #expect(r.status == 1, "\(r.output)")
        #expect(r.stderr.contains("A tool never accepts a host key: run 'termhost ssh lab' on a terminal to review the key of 'lab' and save it"), "\(r.stderr)")
        #expect(r.stderr.contains("can't be established"))
        // On a terminal too: the choice is never offered, and the call ends by itself.
        let tmux = try TmuxSession(command: ["/bin/sh", "-c", "'\(Paths.termhost)' tools call ssh_exec '{\"host\":\"lab\",\"command\":\"true\"}'; echo EXIT=$?; sleep 60"],
                                   environment: h.environment, width: 200)
        defer { tmux.close() }
        let screen = tmux.waitFor("EXIT=")
        #expect(screen.contains("EXIT=1") && screen.contains("A tool never accepts a host key"), "\(screen)")
        #expect(!screen.contains("accept once"), "\(screen)")
        #expect(h.knownHosts.isEmpty, "nothing was saved")
    }

    @Test func aLockedKeyIsAnErrorThatSaysHowToSaveACredential() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir, passphrase: "correct horse")
        defer { h.server.stop() }
        let r = try Self.call(h, "ssh_exec", Self.arguments(["host": "lab", "command": "true"]))
        #expect(r.status == 1, "\(r.output)")
        #expect(r.stderr.contains("A tool never asks for a password or passphrase: save the credential with 'termhost identities add NAME"), "\(r.stderr)")
        #expect(r.stderr.contains("background work has no terminal to ask on"), "asked nowhere: \(r.stderr)")
    }

    @Test(arguments: ["\(NSUserName())@127.0.0.1", "-oProxyCommand=touch /tmp/pwned", "lab:22", "nosuch"])
    func onlySavedHostIDsAreAccepted(_ host: String) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        let r = try Self.call(h, "ssh_exec", Self.arguments(["host": host, "command": "true"]))
        #expect(r.status == 2, "\(r.output)")
        #expect(r.stderr.contains("is not a saved host"), "\(r.stderr)")
        #expect(!h.server.log.contains("Accepted"), "nothing was connected")
    }
}
