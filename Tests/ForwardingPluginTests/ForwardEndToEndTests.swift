import Foundation
import Glibc
import Testing
import TestSupport

/// -L, -R and -D against a real sshd, through the `termhost` binary and the real plugins.
@Suite struct ForwardEndToEndTests {
    /// Large streams at once fill the SSH socket, so libssh2 leaves packets half sent; another
    /// stream's write must wait for them (libssh2 1.10 answers it LIBSSH2_ERROR_BAD_USE, which
    /// used to reset the stream).
    @Test func sixteenLargeConcurrentStreamsArriveWhole() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let sink = SinkServer()
        defer { sink.stop() }
        let run = try h.run([h.target, "-L", "0:127.0.0.1:\(sink.port)"])
        let port = try #require(run.port("active, listening on 127.0.0.1:"), "\(run.output)")
        final class Shared: @unchecked Sendable {
            let data = Net.random(16 * 1024 * 1024)
            var ok = 0
            let lock = NSLock()
        }
        let shared = Shared()
        var expected = Net.Checksum()
        shared.data.withUnsafeBytes { expected.add($0) }
        let want = (expected.count, expected.value)
        Net.concurrently(16) { _ in
            let got = shared.data.withUnsafeBytes { Net.sink(port: port, $0) }
            shared.lock.withLock { if let got, got == want { shared.ok += 1 } }
        }
        #expect(shared.ok == 16, "\(run.output)")
        _ = run.interrupt()
    }

    /// A target that never completes its TCP handshake (a listener whose backlog is full) keeps
    /// that stream's channel open waiting; streams already running on the same connection must
    /// keep moving meanwhile.
    @Test func aSlowTargetDoesNotStallOtherStreams() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let echo = EchoServer()
        defer { echo.stop() }
        let stuck = LoopbackListener()
        defer { stuck.close() }
        var fillers: [Int32] = []
        defer { fillers.forEach { close($0) } }
        for _ in 0..<32 { fillers.append(Net.connectNonBlocking(port: stuck.port)) }
        let run = try h.run([h.target, "-L", "0:127.0.0.1:\(echo.port)", "-L", "0:127.0.0.1:\(stuck.port)"])
        // Rules activate in the order given: the echo rule's line comes first.
        #expect(run.waitForCount(of: "active, listening on 127.0.0.1:", 2), "\(run.output)")
        let ports = run.output.components(separatedBy: "active, listening on 127.0.0.1:").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
        try #require(ports.count == 2, "\(run.output)")
        let (good, slow) = (ports[0], ports[1])
        // A stream on the good rule, its channel open.
        let stream = try #require(LoopbackListener.connect(to: good))
        defer { close(stream) }
        #expect(Net.echo(stream, Array(repeating: 7, count: 1000)))
        // Now a client of the stuck target: its channel open waits on the server's connect.
        let waiting = try #require(LoopbackListener.connect(to: slow))
        defer { close(waiting) }
        // The open is pending once the server's connect to the stuck target is under way: one
        // client socket more than the fillers' heads for that port.
        #expect(Wait.until { stuck.clientConnections > fillers.count }, "the channel open never reached the stuck target")
        // The payloads are made first: the window measures the streams, not a debug build's
        // random number generator on a loaded machine.
        let payloads = (0..<20).map { _ in Net.random(50_000) }
        let start = Date()
        var answered = 0
        for payload in payloads where Net.echo(stream, payload) { answered += 1 }
        #expect(answered == 20)
        // A stream stalled behind the pending open would wait until the server's connect to the
        // stuck target gives up: minutes of SYN retries. 30 s tells that apart from a slow,
        // loaded machine (the 20 round trips took 5-8 s with the whole suite running on 2 cores).
        #expect(Date().timeIntervalSince(start) < 30, "the running stream stalled behind the pending open")
        _ = run.interrupt()
    }

    @Test func aRemoteForwardComesBackToTheTest() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let echo = EchoServer()
        defer { echo.stop() }
        let run = try h.run([h.target, "-R", "0:127.0.0.1:\(echo.port)"])
        // The server listens on its loopback (the default) on a port it chose.
        let port = try #require(run.port("active, server listening on localhost:"), "\(run.output)")
        let data = Net.random(300_000)
        #expect(Net.roundTrip(port: port, data) == data, "echo differs")
        _ = run.interrupt()
    }

    @Test func aDynamicForwardServesCurlAndAnswersSOCKSWithTheRightCodes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let web = HTTPFileServer(body: "hello through socks\n")
        defer { web.stop() }
        let webPort = web.port
        let run = try h.run([h.target, "-D", "0"])
        let socks = try #require(run.port("active, listening on 127.0.0.1:"), "\(run.output)")
        // Domain name (resolved by the server) and IPv4 literal.
        for (flag, host) in [("--socks5-hostname", "localhost"), ("--socks5", "127.0.0.1")] {
            let curl = try Shell.run("/usr/bin/curl", ["-sS", "--max-time", "20", flag, "127.0.0.1:\(socks)", "http://\(host):\(webPort)/hello.txt"])
            #expect(curl.stdout == "hello through socks\n", "\(flag): \(curl.stderr) \(run.output)")
        }
        // Reply codes, with a raw client: CONNECT to a closed port is refused (5), BIND is not
        // supported (7), an unknown address type is not supported (8), IPv6 parses and is tried.
        let closed = LoopbackListener(refusing: true)
        defer { closed.close() }
        let closedPort = closed.port
        let p = [UInt8(closedPort >> 8), UInt8(closedPort & 0xff)]
        #expect(socksReply(socks, [5, 1, 0, 1, 127, 0, 0, 1] + p) == 5)
        #expect(socksReply(socks, [5, 2, 0, 1, 127, 0, 0, 1] + p) == 7)
        #expect(socksReply(socks, [5, 1, 0, 9, 127, 0, 0, 1] + p) == 8)
        #expect(socksReply(socks, [5, 1, 0, 4] + [UInt8](repeating: 0, count: 15) + [1] + p) == 5)
        #expect(socksReply(socks, [5, 1, 0, 3, 9] + Array("localhost".utf8) + p) == 5)
        _ = run.interrupt()
    }

    @Test func aDynamicForwardServesSOCKS4And4aAsOpenSSHDoes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let web = HTTPFileServer(body: "hello through socks4\n")
        defer { web.stop() }
        let webPort = web.port
        let run = try h.run([h.target, "-D", "0"])
        let socks = try #require(run.port("active, listening on 127.0.0.1:"), "\(run.output)")
        // curl's SOCKS4 (an IPv4 address it resolved) and SOCKS4a (the name, for the server).
        for (flag, host) in [("--socks4", "127.0.0.1"), ("--socks4a", "localhost")] {
            let curl = try Shell.run("/usr/bin/curl", ["-sS", "--max-time", "20", flag, "127.0.0.1:\(socks)", "http://\(host):\(webPort)/hello.txt"])
            #expect(curl.stdout == "hello through socks4\n", "\(flag): \(curl.stderr) \(run.output)")
        }
        // SOCKS4 has one failure code (91): a closed port, BIND, an empty 4a name.
        let closed = LoopbackListener(refusing: true)
        defer { closed.close() }
        let p = [UInt8(closed.port >> 8), UInt8(closed.port & 0xff)]
        #expect(socks4Reply(socks, [4, 1] + p + [127, 0, 0, 1] + Array("me".utf8) + [0]) == 91)
        #expect(socks4Reply(socks, [4, 2] + p + [127, 0, 0, 1, 0]) == 91)
        #expect(socks4Reply(socks, [4, 1] + p + [0, 0, 0, 1, 0, 0]) == 91)
        _ = run.interrupt()
    }

    /// Sends a SOCKS4 request; the reply's code (nil: no reply).
    func socks4Reply(_ port: Int, _ request: [UInt8]) -> UInt8? {
        guard let fd = LoopbackListener.connect(to: port) else { return nil }
        defer { close(fd) }
        var tv = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var buf = [UInt8](repeating: 0, count: 8)
        _ = send(fd, request, request.count, 0)
        guard recv(fd, &buf, 8, Int32(MSG_WAITALL)) == 8, buf[0] == 0 else { return nil }
        return buf[1]
    }

    /// Greets with "no authentication", sends request, returns the reply code (nil: no reply).
    func socksReply(_ port: Int, _ request: [UInt8]) -> UInt8? {
        guard let fd = LoopbackListener.connect(to: port) else { return nil }
        defer { close(fd) }
        var tv = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var buf = [UInt8](repeating: 0, count: 64)
        let greeting: [UInt8] = [5, 1, 0]
        _ = send(fd, greeting, 3, 0)
        guard recv(fd, &buf, 2, Int32(MSG_WAITALL)) == 2, buf[0] == 5, buf[1] == 0 else { return nil }
        _ = send(fd, request, request.count, 0)
        guard recv(fd, &buf, 10, Int32(MSG_WAITALL)) >= 2, buf[0] == 5 else { return nil }
        return buf[1]
    }

    @Test func aPortInUseFailsOnlyItsRule() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let echo = EchoServer()
        defer { echo.stop() }
        let busy = LoopbackListener()
        defer { busy.close() }
        let run = try h.run([h.target, "-L", "\(busy.port):127.0.0.1:\(echo.port)", "-L", "0:127.0.0.1:\(echo.port)"])
        let failed = run.waitForLine(containing: "(-L \(busy.port))': failed")
        #expect(failed == "forward '\(h.target) (-L \(busy.port))': failed: cannot listen on 127.0.0.1:\(busy.port): Address already in use")
        let port = try #require(run.port("(-L 0)': active, listening on 127.0.0.1:"), "\(run.output)")
        #expect(Net.roundTrip(port: port, Array("still here".utf8)) == Array("still here".utf8))
        _ = run.interrupt()
    }

    @Test func aFirstConnectionFailureFailsTheRulesAndExits() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        h.server.stop()
        let run = try h.run([h.target, "-L", "0:127.0.0.1:9"])
        #expect(run.waitForExit() == 1)
        #expect(run.output.contains("(-L 0)': failed: ssh: connect to host 127.0.0.1 port \(h.server.port): Connection refused"), "\(run.output)")
        // Nothing has run, so nothing is retried.
        #expect(!run.output.contains("reconnecting"))
    }
}
