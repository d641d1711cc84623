import Foundation
import Testing
import TestSupport

/// org.termhost.ssh.sessions/1 from a plugin written in plain C (Tests/Fixtures/sessions-client-plugin.c),
/// against a real sshd: open, attach a sink, type, read the output, resize (and a refused size),
/// events, detach (twice: the second is NOT_FOUND), kill, list, and an unknown session.
@Suite struct SessionsServiceEndToEndTests {
    @Test func aCPluginOpensTypesIntoAndEndsAPersistentSession() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        try Fixtures.serviceClient(source: "sessions-client-plugin.c", id: "org.test.sesscheck", command: "sesscheck",
                                   requires: "org.termhost.ssh.sessions/1", after: ["org.termhost.ssh"], in: h.plugins)
        let r = try h.termhost(["sesscheck", h.target], timeout: 120)
        #expect(r.status == 0, "\(r.output)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("OUTPUT c-plugin-42") && lines.last == "OK", "\(r.output)")
        #expect(lines.contains("RESIZE-REFUSED 1 resize: 0x30 is outside 1..10000"), "\(r.stdout)")
        #expect(lines.first { $0.hasPrefix("EVENTS ") }?.contains(#""kind":"attached""#) == true)
        #expect(lines.contains("DETACHED 2"), "a second detach of the same attachment is NOT_FOUND")
        #expect(lines.first { $0.hasPrefix("LIST ") }?.contains(#""state":"ended""#) == true, "\(r.stdout)")
        #expect(lines.contains { $0.hasPrefix("MISSING 2 no persistent session 'nosuch'") }, "\(r.stdout)")
    }
}
