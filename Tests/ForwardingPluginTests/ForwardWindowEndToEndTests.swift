import Foundation
import Testing
import TestSupport

/// A -L stream's server-to-client window grows over a long path (100 ms round trips through
/// Benchmarks/delay-proxy.c) within the connection's receiveWindowMiB budget, and the stream
/// arrives whole. No timing is asserted (Benchmarks/wan.sh measures the speed). Needs
/// Termhost's libssh2 (receive-window.patch).
@Suite(.timeLimit(.minutes(3))) struct ForwardWindowEndToEndTests {
    static let patched = (try? LoadedLibSSH2.exports("libssh2_channel_termhost_receive_window", of: Paths.products + "/libSSHPlugin.so")) == true

    @Test(.enabled(if: patched, "needs Termhost's libssh2 (libssh2_channel_termhost_receive_window)"))
    func aForwardedStreamsWindowGrowsWithinTheBudgetAndEveryByteArrives() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        defer { h.server.stop() }
        let proxy = try DelayProxy(in: dir, target: h.server.port, delayMilliseconds: 50)
        defer { proxy.stop() }
        _ = dir.write("home/.ssh/known_hosts", "[127.0.0.1]:\(proxy.port) \(h.server.hostPublicKey)\n")
        _ = dir.write("policy.json", #"{ "settings": { "org.termhost.ssh": { "receiveWindowMiB": 4 } } }"#)
        let echo = EchoServer()
        defer { echo.stop() }
        let run = try ForwardRun(Paths.termhost, ["--log-level", "debug", "forward", "run", "\(NSUserName())@127.0.0.1:\(proxy.port)",
                                                  "-L", "0:127.0.0.1:\(echo.port)"], environment: h.environment)
        let port = try #require(run.port("active, listening on 127.0.0.1:"), "\(run.output)")
        // 16 MiB there and back: the echo comes back at the rate the stream goes out.
        let data = Net.random(16 << 20)
        let back = Net.roundTrip(port: port, data)
        let whole = back == data   // compared outside #expect: a failure must not print 16 MiB
        #expect(whole, "\(back?.count ?? 0) of \(data.count) bytes came back")
        _ = run.interrupt()
        let sizes = ReceiveWindowLog.grownSizes(in: run.output)
        #expect(!sizes.isEmpty, "the window never grew:\n\(run.output.suffix(2000))")
        #expect(sizes.allSatisfy { $0 <= (2 + 4) << 20 }, "\(sizes)")
    }
}
