import Foundation
import Glibc
import Testing
import TestSupport

/// Transport loss and recovery: one shared connection per host, the 1/2/5/10/30 s schedule,
/// and authentication failures ending recovery.
@Suite struct RecoveryEndToEndTests {
    @Test func rulesRecoverOnANewConnectionAfterSSHDIsKilledAndRestarted() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let echo = EchoServer()
        defer { echo.stop() }
        let run = try h.run([h.target, "-L", "0:127.0.0.1:\(echo.port)", "-R", "0:127.0.0.1:\(echo.port)"])
        let local = try #require(run.port("(-L 0)': active, listening on 127.0.0.1:"), "\(run.output)")
        _ = try #require(run.port("(-R 0)': active, server listening on localhost:"), "\(run.output)")
        // Both rules share one connection.
        #expect(h.server.log.components(separatedBy: "Accepted publickey").count - 1 == 1)
        h.server.crash()
        #expect(run.waitForLine(containing: "\(h.target): connection lost: ssh: connection to 127.0.0.1 port \(h.server.port) lost: the server closed the connection") != nil, "\(run.output)")
        #expect(run.waitForLine(containing: "\(h.target): reconnecting in 1 s (attempt 1)") != nil, "\(run.output)")
        #expect(run.waitForLine(containing: "(-L 0)': reconnecting (attempt 1 at ") != nil, "\(run.output)")
        // While the host is down, new local connections are refused, never held.
        #expect(Net.roundTrip(port: local, [1, 2, 3]) == [])
        // The first attempt finds the server still down, is logged, and the next waits 2 s.
        #expect(run.waitForLine(containing: "\(h.target): attempt 1 failed: ", timeout: 5) != nil, "\(run.output)")
        #expect(run.waitForLine(containing: "\(h.target): reconnecting in 2 s (attempt 2)") != nil, "\(run.output)")
        try h.server.restart()
        // Attempt 2, due 2 s after the first failed, finds it back.
        #expect(run.waitForLine(containing: "\(h.target): reconnected (attempt 2)", timeout: 6) != nil, "\(run.output)")
        // -R listens again on the new connection (the server picks a new port).
        #expect(run.waitForCount(of: "(-R 0)': active", 2), "\(run.output)")
        let remote = try #require(run.output.components(separatedBy: "server listening on localhost:").dropFirst().last
            .flatMap { Int($0.prefix { $0.isNumber }) }, "\(run.output)")
        let data = Net.random(100_000)
        #expect(Net.roundTrip(port: local, data) == data, "local echo differs")
        #expect(Net.roundTrip(port: remote, data) == data, "remote echo differs: \(run.output)")
        _ = run.interrupt()
    }

    @Test func anAuthenticationFailureDuringRecoveryEndsIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let run = try h.run([h.target, "-D", "0"])
        _ = try #require(run.port("active, listening on 127.0.0.1:"), "\(run.output)")
        h.server.crash()
        h.revokeKey()
        try h.server.restart()
        #expect(run.waitForExit(timeout: 30) == 1, "\(run.output)")
        #expect(run.output.contains("\(h.target): recovery ended: "), "\(run.output)")
        #expect(run.output.contains("(-D 0)': failed: recovery ended: "), "\(run.output)")
        // One attempt: a refused log-in is not retried.
        #expect(!run.output.contains("attempt 2"), "\(run.output)")
    }

    @Test func anIdleConnectionToAFrozenServerIsDetectedByKeepalive() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        try h.termhost(["hosts", "add", "frozen", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(),
                        "--keepalive", "1", "--keepalive-count", "2"])
        // An -L rule with no streams: nothing but the watch reads this connection.
        let run = try h.run(["frozen", "-L", "0:127.0.0.1:9"])
        _ = try #require(run.port("active, listening on 127.0.0.1:"), "\(run.output)")
        // Freeze the per-connection sshd processes: the socket stays open, nothing answers.
        let children = try Shell.run("/usr/bin/pgrep", ["-P", String(h.server.pid)]).stdout.split(separator: "\n").map(String.init)
        for child in children { _ = try Shell.run("/bin/kill", ["-STOP", child]) }
        defer { for child in children { _ = try? Shell.run("/bin/kill", ["-KILL", child]) } }
        let start = Date()
        let lost = run.waitForLine(containing: "frozen: connection lost: ", timeout: 15)
        #expect(lost == "forward: frozen: connection lost: Timeout, server 127.0.0.1 not responding.", "\(run.output)")
        // Silent for more than interval x count (2 s), noticed within a couple of probes after.
        #expect(Date().timeIntervalSince(start) < 6)
        #expect(run.waitForLine(containing: "frozen: reconnecting in 1 s (attempt 1)") != nil)
        _ = run.interrupt()
    }

    @Test func anIdleConnectionToAHealthyServerStaysUp() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        try h.termhost(["hosts", "add", "idle", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(),
                        "--keepalive", "1", "--keepalive-count", "2"])
        let run = try h.run(["idle", "-L", "0:127.0.0.1:9"])
        _ = try #require(run.port("active, listening on 127.0.0.1:"), "\(run.output)")
        // The server answers every probe, so the connection is never silent for interval x
        // count (2 s): four times that without a loss shows the answers are counted.
        Wait.observe(for: 8)
        #expect(!run.output.contains("connection lost"), "\(run.output)")
        _ = run.interrupt()
    }

    @Test func stoppingIsBoundedAndReleasesTheListeners() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let run = try h.run([h.target, "-L", "0:127.0.0.1:9", "-D", "0"])
        let local = try #require(run.port("(-L 0)': active, listening on 127.0.0.1:"))
        let stop = run.interrupt()
        #expect(stop.status == 130)
        #expect(stop.seconds < 3.5)
        #expect(LoopbackListener.connect(to: local).map { close($0) } == nil)
    }
}

/// What operators see from another shell while `forward run` runs.
@Suite struct StatusEndToEndTests {
    @Test func listShowsTheStateOfRulesARunningProcessRuns() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let echo = EchoServer()
        defer { echo.stop() }
        try h.termhost(["forward", "add", "--name", "web", h.target, "-L", "0:127.0.0.1:\(echo.port)"])
        try h.termhost(["forward", "add", "--name", "idle", h.target, "-D", "0"])
        let run = try h.run(["web"])
        let port = try #require(run.port("forward 'web': active, listening on 127.0.0.1:"), "\(run.output)")
        // One stream held open: the count shows it.
        let stream = try #require(LoopbackListener.connect(to: port))
        #expect(Net.echo(stream, [1, 2, 3]))
        var list = ""
        try Wait.until(poll: 0.1) {
            list = try h.termhost(["forward", "list"]).stdout
            return list.contains("active (1 connection)")
        }
        #expect(list.contains("web ") && list.contains("active (1 connection)"), "\(list)")
        #expect(list.split(separator: "\n").first { $0.hasPrefix("idle") }?.hasSuffix("stopped") == true, "\(list)")
        close(stream)
        _ = run.interrupt()
        // The process is gone: its rules show stopped again.
        let after = try h.termhost(["forward", "show", "web"]).stdout
        #expect(after.contains("state:   stopped"), "\(after)")
    }
}
