import Foundation
import Testing
import TestSupport

/// `termhost forward run -L` through a stock Dropbear on loopback, whose 24,576-byte channel
/// window every stream fills many times over.
@Suite(.enabled(if: DropbearServer.available, "needs root (a mount namespace) and dropbear-bin"))
struct DropbearForwardEndToEndTests {
    @Test func aLocalForwardCarriesBytesBothWaysWhole() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try DropbearHarness(dir: dir)
        defer { h.server.stop() }
        _ = try Fixtures.bundle("libForwardingPlugin.so", as: "org.termhost.forwarding", in: h.plugins)
        let echo = EchoServer(), sink = SinkServer()
        defer { echo.stop(); sink.stop() }
        let run = try ForwardRun(Paths.termhost, ["forward", "run", h.target, "-L", "0:127.0.0.1:\(echo.port)", "-L", "0:127.0.0.1:\(sink.port)"],
                                 environment: h.environment)
        // Rules activate in the order given: the echo rule's line comes first.
        #expect(run.waitForCount(of: "active, listening on 127.0.0.1:", 2), "\(run.output)\n\(h.server.log)")
        let ports = run.output.components(separatedBy: "active, listening on 127.0.0.1:").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
        try #require(ports.count == 2, "\(run.output)")

        let data = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        #expect(Net.roundTrip(port: ports[0], data) == data, "\(run.output)")

        let bulk = Net.random(8 * 1024 * 1024)
        var expected = Net.Checksum()
        bulk.withUnsafeBytes { expected.add($0) }
        let got = bulk.withUnsafeBytes { Net.sink(port: ports[1], $0) }
        #expect(got.map { $0 == (expected.count, expected.value) } == true, "\(run.output)")
        _ = run.interrupt()
    }

    @Test func anIdleConnectionStaysUpWhileDropbearAnswersTheProbes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try DropbearHarness(dir: dir)
        defer { h.server.stop() }
        _ = try Fixtures.bundle("libForwardingPlugin.so", as: "org.termhost.forwarding", in: h.plugins)
        try h.termhost(["hosts", "add", "idle", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(),
                        "--keepalive", "1", "--keepalive-count", "2"])
        let run = try ForwardRun(Paths.termhost, ["forward", "run", "idle", "-L", "0:127.0.0.1:9"], environment: h.environment)
        #expect(run.waitForCount(of: "active, listening on 127.0.0.1:", 1), "\(run.output)\n\(h.server.log)")
        // Silent for interval x count (2 s) would be a loss: four times that shows Dropbear's
        // answers to the probes are counted.
        Wait.observe(for: 8)
        #expect(!run.output.contains("connection lost"), "\(run.output)")
        _ = run.interrupt()
    }
}
