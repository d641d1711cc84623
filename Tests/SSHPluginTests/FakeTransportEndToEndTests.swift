import Foundation
import Testing
import TestSupport

/// The fake transport (Tests/Fixtures/FakeTransport) serves the same C client
/// (Tests/Fixtures/transport-plugin.c, `termhost tp ...`) the real SSH plugin does, with the
/// same answers where the transport's contract fixes them: a consumer's tests can stage it
/// instead of the SSH plugin when they are not about SSH.
@Suite struct FakeTransportEndToEndTests {
    static func harness(_ dir: TemporaryDirectory) throws -> FakeTransportHarness {
        let h = try FakeTransportHarness(dir: dir)
        try Fixtures.serviceClient(source: "transport-plugin.c", id: "org.test.transport", command: "tp",
                                   requires: "org.termhost.ssh.transport/1", in: h.plugins, defines: ["-D_DEFAULT_SOURCE"],
                                   abi: "1.1")  // it declares 1.1 and reaches 1.2's exec_bounded through TERMHOST_HAS_FIELD
        return h
    }

    @Test func execRunsHereAndAClosedHandleIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        let r = try h.termhost(["tp", h.target])
        #expect(r.stdout == """
        null caller: 1
        open: 0
        out: one
        exec: 0 status 0
        stale: 2 no such SSH connection: it was closed, or the handle is not one open() returned

        """, "\(r.stderr)")
    }

    /// exec_bounded, as a future consumer (an assistant running commands) uses it: a deadline,
    /// a cancel from another thread, and a short exec beside a long one on one connection.
    @Test func execBoundedHonoursItsDeadlineAndCancelFlag() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        let deadline = try h.termhost(["tp", "deadline", h.target])
        #expect(deadline.stdout == """
        deadline: 8 ssh: 'sleep 30' on fake-host did not finish within 1000 ms; its channel was closed
        out: after
        then: 0 status 0
        too long: 1 exec_bounded's deadline_ms must be a whole number of ms from 0 to 86400000, not '86400001'

        """, "\(deadline.stderr)")
        let command = "while /bin/echo tick; do sleep 0.2; done"
        let cancel = try h.termhost(["tp", "cancel", h.target, command])
        #expect(cancel.stdout == "cancel: 7 ssh: '\(command)' on fake-host was cancelled; its channel was closed\n", "\(cancel.stderr)")
        let parallel = try h.termhost(["tp", "parallel", h.target])
        #expect(parallel.stdout == "long started: 1\nout: short\nshort: 0 status 0\nlong still running: 1\nlong: 7\n", "\(parallel.stderr)")
    }

    @Test func channelsReachLocalServicesAndWithSessionIsUnsupported() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.harness(dir)
        let service = TransportChannelsEndToEndTests.upperCasingService()
        defer { service.close() }
        let tcp = try h.termhost(["tp", "tcp", h.target, String(service.port), "through the fake"])
        #expect(tcp.stdout == "got: THROUGH THE FAKE\n", "\(tcp.stderr)")
        let splice = try h.termhost(["tp", "splice", h.target, String(service.port), " through the splice"])
        #expect(splice.stdout == """
        splice: 0
        got: [INITIAL] THROUGH THE SPLICE
        done: 0 \("")
        refused: 5 named
        client sees: 0
        ended: 0 ids differ: 1 client sees: 0
        bad: 1

        """, "\(splice.output)")
        let reenter = try h.termhost(["tp", "reenter", h.target])
        #expect(reenter.stdout == "reenter: 3\n", "\(reenter.stderr)")
    }
}
