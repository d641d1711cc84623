import Foundation
import Testing
import TestSupport

/// forward_list through `termhost tools call`: what `termhost forward list` shows.
@Suite struct ForwardListToolEndToEndTests {
    @Test func aSavedRuleIsListedWithWhetherItRuns() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        defer { h.server.stop() }
        let add = try h.termhost(["forward", "add", "--name", "web", h.target, "-L", "0:127.0.0.1:9"])
        #expect(add.status == 0, "\(add.output)")
        let r = try h.termhost(["tools", "call", "forward_list"])
        #expect(r.status == 0, "\(r.output)")
        let o = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [String: Any] ?? [:]
        let rules = o["rules"] as? [[String: Any]] ?? []
        #expect(rules.count == 1)
        #expect(rules.first?["name"] as? String == "web")
        #expect(rules.first?["host"] as? String == h.target)
        #expect(rules.first?["target_port"] as? Int == 9)
        #expect(rules.first?["running"] as? Bool == false)
        #expect(rules.first?["state"] as? String == "stopped")
        #expect(o["count"] as? Int == 1)
    }
}
