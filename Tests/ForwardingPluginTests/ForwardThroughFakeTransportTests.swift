import Foundation
import Glibc
import Testing
import TestSupport

/// The forwarding plugin over the fake transport (Tests/Fixtures/FakeTransport): its listeners,
/// rules, SOCKS and recovery, with the streams moved by the fake on this machine instead of
/// over SSH. What is about SSH (libssh2's channels, sshd's behaviour) stays in the other suites.
@Suite struct ForwardThroughFakeTransportTests {
    @Test func aLocalForwardCarries100ConcurrentStreamsByteExact() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try FakeTransportHarness.forwarding(dir: dir)
        let echo = EchoServer()
        defer { echo.stop() }
        let run = try h.run([h.target, "-L", "0:127.0.0.1:\(echo.port)"])
        let port = try #require(run.port("active, listening on 127.0.0.1:"), "\(run.output)")
        // One large stream first: more than the 2 MiB pause mark, so backpressure must engage
        // and release, and the half-close must drain every byte before end-of-file.
        let big = Net.random(8 * 1024 * 1024 + 123)
        #expect(Net.roundTrip(port: port, big) == big, "8 MiB echo differs")
        // All 100 streams open at once: each echoes a greeting while every one before it stays
        // open, so 100 channels are live together.
        var streams: [Int32] = []
        defer { streams.forEach { close($0) } }
        for i in 0..<100 {
            let fd = try #require(LoopbackListener.connect(to: port), "stream \(i): cannot connect")
            streams.append(fd)
            #expect(Net.echo(fd, Array("stream \(i)\n".utf8)), "stream \(i) did not echo while \(i) others were open")
        }
        // Then all of them move their payloads at the same time, each on a thread of its own.
        final class Results: @unchecked Sendable { var ok = [Bool](repeating: false, count: 100); let lock = NSLock() }
        let results = Results()
        let fds = streams
        Net.concurrently(100) { i in
            let data = Net.random(16 * 1024 + i * 997)
            let back = Net.roundTrip(fds[i], data)
            results.lock.withLock { results.ok[i] = back == data }
        }
        #expect(results.ok.filter { $0 }.count == 100, "\(run.output)")
        let stop = run.interrupt()
        #expect(stop.seconds < 3.5)
        #expect(run.output.contains("forward '\(h.target) (-L 0)': stopped"))
    }

    @Test func aDynamicForwardConnectsThroughTheTransport() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try FakeTransportHarness.forwarding(dir: dir)
        let echo = EchoServer()
        defer { echo.stop() }
        let run = try h.run([h.target, "-D", "0"])
        let socks = try #require(run.port("active, listening on 127.0.0.1:"), "\(run.output)")
        for host in [nil, Array("localhost".utf8)] {
            let client = try #require(LoopbackListener.connect(to: socks))
            defer { close(client) }
            #expect(socksConnect(client, port: echo.port, host: host) == 0, "\(run.output)")
            #expect(Net.echo(client, Array("through the fake".utf8)), "\(run.output)")
        }
        // A target nobody listens on: the splice's on_done reports the refusal, SOCKS says 5.
        let closed = LoopbackListener(refusing: true)
        defer { closed.close() }
        let client = try #require(LoopbackListener.connect(to: socks))
        defer { close(client) }
        #expect(socksConnect(client, port: closed.port) == 5, "\(run.output)")
        _ = run.interrupt()
    }

    /// The transport reports a lost connection (watch's on_lost): the rules say so and recovery
    /// starts on its schedule.
    @Test func aLostConnectionIsReportedAndRecoveryStarts() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try FakeTransportHarness.forwarding(dir: dir)
        let echo = EchoServer()
        defer { echo.stop() }
        let run = try h.run(["lost@fake-host", "-L", "0:127.0.0.1:\(echo.port)"])
        #expect(run.waitForLine(containing: "connection lost: ssh: the connection to fake-host was lost") != nil, "\(run.output)")
        #expect(run.waitForLine(containing: "reconnecting in 1 s (attempt 1)") != nil, "\(run.output)")
        _ = run.interrupt()
    }
}

extension FakeTransportHarness {
    /// The fake transport with the forwarding plugin beside it.
    static func forwarding(dir: TemporaryDirectory) throws -> FakeTransportHarness {
        let h = try FakeTransportHarness(dir: dir)
        _ = try Fixtures.bundle("libForwardingPlugin.so", as: "org.termhost.forwarding", in: h.plugins)
        return h
    }

    /// `termhost forward run ARGS...` in the background.
    func run(_ args: [String]) throws -> ForwardRun {
        try ForwardRun(Paths.termhost, ["forward", "run"] + args, environment: environment)
    }
}
