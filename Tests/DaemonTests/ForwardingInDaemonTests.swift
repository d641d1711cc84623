import Foundation
import Glibc
import Testing
import TestSupport

/// `forward start` puts a rule in the daemon (starting one when none runs) and keeps it there:
/// `forward list` shows it from any shell, a daemon restart starts it again by itself, and
/// `forward stop` ends it for good. The rule forwards a local port to the test's own sshd, so a
/// connection through it reads the server's SSH banner.
@Suite struct ForwardingInDaemonTests {
    @Test func aStartedRuleRunsInTheDaemonComesBackAfterARestartAndStopEndsIt() throws {
        let setup = try DaemonSetup("termhost-fwd-daemon", plugins: ["libForwardingPlugin.so": "org.termhost.forwarding"], start: false)
        defer { setup.stop() }
        let (ssh, daemon) = (setup.ssh, setup.daemon)
        let add = try ssh.termhost(["forward", "add", "--name", "web", ssh.target, "-L", "0:127.0.0.1:\(ssh.server.port)"])
        #expect(add.status == 0, "\(add.output)")

        // No daemon runs: start starts one (and says nothing of it), then runs the rule there.
        let started = try ssh.termhost(["forward", "start", "web"], timeout: 120)
        defer { _ = try? daemon.run("daemon", "stop") }   // the daemon start started
        #expect(started.status == 0, "\(started.output)")
        let port = try #require(Self.port(started.stdout), "\(started.output)")
        #expect(started.stdout.contains("runs in the daemon until 'termhost forward stop web'"), "\(started.stdout)")
        #expect(Self.banner(port).hasPrefix("SSH-2.0-"), "the forward reaches the server")
        let listed = try ssh.termhost(["forward", "list"])
        #expect(listed.stdout.contains("active (") && listed.stdout.contains("listening on 127.0.0.1:\(port)"), "\(listed.output)")
        let again = try ssh.termhost(["forward", "start", "web"])
        #expect(again.status == 0 && again.stdout.contains("already running"), "\(again.output)")

        // Another daemon (stopped, started again): the rule starts by itself, on a new port.
        let stopped = try daemon.run("daemon", "stop")
        #expect(stopped.status == 0, "\(stopped.output)")
        #expect(Wait.until(timeout: 30) { (try? ssh.termhost(["forward", "list"]).stdout.contains("started: runs when the daemon does")) == true },
                "with no daemon, list says the rule waits for one")
        try daemon.start()
        var restored: Int?
        #expect(Wait.until(timeout: 60) {
            restored = (try? ssh.termhost(["forward", "list"])).flatMap { Self.port($0.stdout) }
            return restored != nil
        }, "the daemon started the rule again: \(daemon.log)")
        if let restored { #expect(Self.banner(restored).hasPrefix("SSH-2.0-")) }

        // stop ends it and its start: the next daemon leaves it alone.
        let stop = try ssh.termhost(["forward", "stop", "web"])
        #expect(stop.status == 0 && stop.stdout.contains("Stopped forward 'web'"), "\(stop.output)")
        daemon.stop()
        try daemon.start()
        let after = try ssh.termhost(["forward", "list"])
        #expect(after.stdout.contains("stopped") && !after.stdout.contains("started:") && !after.stdout.contains("active"), "\(after.output)")
    }

    @Test func aRuleThatCannotConnectIsNotKeptAndNoAutostartSaysHowToStartADaemon() throws {
        let setup = try DaemonSetup("termhost-fwd-daemon", plugins: ["libForwardingPlugin.so": "org.termhost.forwarding"], start: false)
        defer { setup.stop() }
        let (ssh, daemon) = (setup.ssh, setup.daemon)
        // A server that refuses the connection: port 1 of loopback.
        #expect(try ssh.termhost(["forward", "add", "--name", "dead", "root@127.0.0.1:1", "-L", "0:127.0.0.1:9"]).status == 0)
        let refused = try ssh.termhost(["--no-autostart", "forward", "start", "dead"])
        #expect(refused.status == 1 && refused.stderr.contains("'forward start' runs in the daemon: ")
                && refused.stderr.contains("start it with 'termhost daemon'"), "\(refused.output)")
        #expect(try ssh.termhost(["forward", "start", "nosuch"]).stderr.contains("no rule named 'nosuch'"))
        #expect(try ssh.termhost(["daemon", "status"]).status == 1, "a typo never starts a daemon")
        try daemon.start()
        let failed = try ssh.termhost(["forward", "start", "dead"], timeout: 120)
        #expect(failed.status == 1 && failed.stderr.contains("forward 'dead': failed: ") && failed.stderr.contains("not started"), "\(failed.output)")
        let listed = try ssh.termhost(["forward", "list"])
        #expect(!listed.stdout.contains("started:"), "a start that never ran is not kept: \(listed.output)")
    }

    @Test func forwardingCommandsOfTwoClientsRunSideBySideInTheDaemon() throws {
        // The forwarding feature sets concurrent_commands: a `forward run` in the daemon does
        // not keep `forward start` (which only runs there) or `forward list` out.
        let setup = try DaemonSetup("termhost-fwd-daemon", plugins: ["libForwardingPlugin.so": "org.termhost.forwarding"])
        defer { setup.stop() }
        let (ssh, daemon) = (setup.ssh, setup.daemon)
        let plugin = try #require(setup.bundled["org.termhost.forwarding"])
        let manifest = try String(contentsOfFile: plugin.manifest, encoding: .utf8)
        #expect(manifest.contains(#""concurrentCommands": true"#), "the derived manifest says so: \(manifest)")
        for name in ["one", "two"] {
            #expect(try ssh.termhost(["forward", "add", "--name", name, ssh.target, "-L", "0:127.0.0.1:\(ssh.server.port)"]).status == 0)
        }
        let run = try Background(Paths.termhost, ["forward", "run", "one"], environment: ssh.environment)
        let out = CollectedOutput(run.stdout)
        defer { if run.process.isRunning { kill(run.process.processIdentifier, SIGKILL) } }
        #expect(Wait.until(timeout: 60) { out.text.contains("forward 'one': active") }, "\(out.text) \(daemon.log)")
        let started = try ssh.termhost(["forward", "start", "two"], timeout: 120)
        #expect(started.status == 0 && started.stdout.contains("forward 'two': active"), "\(started.output)")
        let list = try ssh.termhost(["forward", "list"])
        #expect(list.stdout.components(separatedBy: "active (").count == 3, "both run in the daemon: \(list.output)")
        #expect(daemon.log.components(separatedBy: "runs 'forward' in scene").count == 6, "two adds, run, start and list all ran there: \(daemon.log)")
        // Ctrl-C ends the run's rule only; the started one runs on.
        kill(run.process.processIdentifier, SIGINT)
        #expect(Wait.until(timeout: 30) { !run.process.isRunning })
        let after = try ssh.termhost(["forward", "list"])
        #expect(after.stdout.components(separatedBy: "active (").count == 2 && after.stdout.contains("two"), "\(after.output)")
    }

    /// The port in "listening on 127.0.0.1:PORT".
    static func port(_ text: String) -> Int? {
        guard let range = text.range(of: "listening on 127.0.0.1:") else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }

    /// The first bytes a connection to 127.0.0.1:port reads (an SSH server's banner).
    static func banner(_ port: Int) -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(UInt16(port).bigEndian)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        var t = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, socklen_t(MemoryLayout<timeval>.size))
        let rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else { return "" }
        var buf = [UInt8](repeating: 0, count: 256)
        let n = recv(fd, &buf, buf.count, 0)
        return n > 0 ? String(decoding: buf[0..<n], as: UTF8.self) : ""
    }
}
