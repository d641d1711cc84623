import Foundation
import Glibc
import Testing
import TestSupport

/// `forward stop` and `forward retry` from another shell, reaching the `forward run` that runs
/// the rule: stopping one rule keeps its peers and their shared connection; only an explicit
/// retry starts a failed rule again.
@Suite struct ControlEndToEndTests {
    @Test func stoppingOneRuleKeepsItsPeersAndTheirConnection() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let echo = EchoServer()
        defer { echo.stop() }
        try h.termhost(["forward", "add", "--name", "a", h.target, "-L", "0:127.0.0.1:\(echo.port)"])
        try h.termhost(["forward", "add", "--name", "b", h.target, "-L", "0:127.0.0.1:\(echo.port)"])
        let run = try h.run(["a", "b"])
        let a = try #require(run.port("forward 'a': active, listening on 127.0.0.1:"), "\(run.output)")
        let b = try #require(run.port("forward 'b': active, listening on 127.0.0.1:"), "\(run.output)")
        let pid = run.process.processIdentifier
        // A stream through a, idle once established: stopping the rule ends it too, and until
        // then the rule counts it.
        let idle = try #require(LoopbackListener.connect(to: a))
        defer { close(idle) }
        #expect(Net.echo(idle, Array("ping".utf8)))
        #expect(Wait.until(poll: 0.1) { (try? h.termhost(["forward", "list"]).stdout.contains("active (1 connection)")) == true }, "the stream is not counted")

        let stop = try h.termhost(["forward", "stop", "a"])
        #expect(stop.status == 0, "\(stop.output)")
        #expect(stop.stdout == "Stopped forward 'a' (process \(pid))\n", "\(stop.output)")
        #expect(run.waitForLine(containing: "forward 'a': stopped") != nil, "\(run.output)")
        var end = pollfd(fd: idle, events: Int16(POLLIN), revents: 0), byte: UInt8 = 0
        #expect(poll(&end, 1, 5000) == 1 && recv(idle, &byte, 1, 0) <= 0, "a stream of the stopped rule is still open")
        #expect(LoopbackListener.connect(to: a).map { close($0) } == nil, "a's port still accepts")
        let data = Net.random(50_000)
        #expect(Net.roundTrip(port: b, data) == data, "b stopped carrying: \(run.output)")
        // The status file is written at most every 200 ms.
        var list = ""
        #expect(Wait.until(poll: 0.1) {
            list = (try? h.termhost(["forward", "list"]).stdout) ?? ""
            return list.split(separator: "\n").first { $0.hasPrefix("a ") }?.hasSuffix("stopped") == true
        }, "\(list)")

        // Started again on the connection b kept: still one log-in.
        let retry = try h.termhost(["forward", "retry", "a"])
        #expect(retry.stdout == "Started forward 'a' again (process \(pid))\n", "\(retry.output)")
        #expect(run.waitForCount(of: "forward 'a': active, listening on 127.0.0.1:", 2), "\(run.output)")
        let again = try #require(run.output.components(separatedBy: "forward 'a': active, listening on 127.0.0.1:").last
            .flatMap { Int($0.prefix { $0.isNumber }) })
        #expect(Net.roundTrip(port: again, data) == data)
        #expect(h.server.log.components(separatedBy: "Accepted publickey").count - 1 == 1, "\(h.server.log)")

        // A rule already running is left alone; the last stop ends the run with success.
        let twice = try h.termhost(["forward", "retry", "b"])
        #expect(twice.stdout.hasPrefix("Forward 'b' is already running (active"), "\(twice.output)")
        let both = try h.termhost(["forward", "stop", "a", "b"])
        #expect(both.status == 0, "\(both.output)")
        #expect(run.waitForExit(timeout: 10) == 0, "\(run.output)")

        let gone = try h.termhost(["forward", "stop", "a"])
        #expect(gone.status == 1)
        #expect(gone.stderr.contains("termhost forward stop: no running 'forward run' has a rule named 'a'"), "\(gone.output)")
    }

    @Test func aFailedRuleStartsAgainOnlyWhenRetried() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        // A second saved host on the same server whose key the server does not know yet.
        let other = try UserKey(in: dir.sub("keys"), name: "other")
        try h.termhost(["hosts", "add", "locked", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(),
                        "--identity", other.privatePath])
        try h.termhost(["forward", "add", "--name", "open", h.target, "-D", "0"])
        try h.termhost(["forward", "add", "--name", "shut", "locked", "-D", "0"])
        let run = try h.run(["open", "shut"])
        _ = try #require(run.port("forward 'open': active, listening on 127.0.0.1:"), "\(run.output)")
        #expect(run.waitForLine(containing: "forward 'shut': failed: ") != nil, "\(run.output)")
        // Failed is final: nothing retries by itself. A retry would be announced ("reconnecting
        // in N s") the moment it is scheduled, in the same step that reports the failure, so a
        // short window after the failure line shows none was.
        Wait.observe(for: 0.5)
        #expect(!run.output.contains("locked: reconnecting"), "\(run.output)")

        let keys = h.server.directory + "/authorized_keys"
        let known = try String(contentsOfFile: keys, encoding: .utf8)
        try (known + (known.hasSuffix("\n") ? "" : "\n") + other.publicLine + "\n").write(toFile: keys, atomically: true, encoding: .utf8)
        let retry = try h.termhost(["forward", "retry", "shut"])
        #expect(retry.status == 0, "\(retry.output)")
        let port = try #require(run.port("forward 'shut': active, listening on 127.0.0.1:", timeout: 10), "\(run.output)\n\(h.server.log)")
        #expect(LoopbackListener.connect(to: port).map { close($0) } != nil)
        _ = run.interrupt()
    }
}
