import Foundation
import Testing
import TestSupport

/// A bulk channel's receive window grows while a long path needs it (here 100 ms round trips
/// through Benchmarks/delay-proxy.c), never past the receiveWindowMiB budget, and every byte
/// arrives. The debug log says each growth. No timing is asserted: how fast it went is
/// Benchmarks/wan.sh's business. Needs Termhost's libssh2 (receive-window.patch).
@Suite(.timeLimit(.minutes(3))) struct ReceiveWindowEndToEndTests {
    static let patched = (try? LoadedLibSSH2.exports("libssh2_channel_termhost_receive_window", of: Paths.products + "/libSSHPlugin.so")) == true

    @Test(.enabled(if: patched, "needs Termhost's libssh2 (libssh2_channel_termhost_receive_window)"))
    func execOutputOverALongPathArrivesWholeWithItsWindowUnderTheCap() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let proxy = try DelayProxy(in: dir, target: h.server.port, delayMilliseconds: 50)
        defer { proxy.stop() }
        _ = dir.write("home/.ssh/known_hosts", "[127.0.0.1]:\(proxy.port) \(h.server.hostPublicKey)\n")
        _ = dir.write("policy.json", #"{ "settings": { "org.termhost.ssh": { "receiveWindowMiB": 4 } } }"#)
        // 24 MiB of lines: at one 2 MiB window per 100 ms the window is what holds it back.
        let line = String(repeating: "0123456789abcdef", count: 4) + "\n"
        let text = String(repeating: line, count: (24 << 20) / line.utf8.count)
        let file = dir.write("big.txt", text)
        let r = try h.termhost(["--log-level", "debug", "exec", "\(NSUserName())@127.0.0.1:\(proxy.port)", "--", "cat", file], timeout: 120)
        #expect(r.status == 0, "\(r.stderr.suffix(2000))")
        let whole = r.stdout == text   // compared outside #expect: a failure must not print 24 MiB
        #expect(whole, "\(r.stdout.utf8.count) of \(text.utf8.count) bytes")
        let sizes = ReceiveWindowLog.grownSizes(in: r.stderr)
        // The budget is what the connection's windows may grow beyond their opening 2 MiB.
        #expect(!sizes.isEmpty, "the window never grew:\n\(r.stderr.suffix(2000))")
        #expect(sizes.allSatisfy { $0 <= (2 + 4) << 20 }, "\(sizes)")
        #expect(sizes.last == (2 + 4) << 20, "\(sizes)")
    }
}
