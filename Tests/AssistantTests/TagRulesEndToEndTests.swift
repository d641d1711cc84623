import Foundation
import Testing
import TestSupport

/// Rules by tag in real runs (issue 27 item 6): the `termhost` binary, the Assistant and SSH
/// plugins, the scripted model, a real sshd. The same command on the same saved host is denied
/// while the host carries the tag the operator's deny names, and runs once it does not; the
/// side effect on the host decides, not the verdict alone.
@Suite(.serialized) struct TagRulesEndToEndTests {
    typealias Harness = AssistantRunEndToEndTests.Harness
    typealias Chat = AssistantRunEndToEndTests.Chat

    @Test func aTagsDenyHoldsOnHostsWithThatTagOnly() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let marker = dir.path + "/touched-by-the-assistant"
        let h = try Harness(dir: dir, script: [
            Chat.calls([AssistantRunEndToEndTests.exec("call_1", "touch \(marker)")]),
            Chat.text(["refused"]),
            Chat.calls([AssistantRunEndToEndTests.exec("call_2", "touch \(marker)")]),
            Chat.text(["done"]),
        ])
        defer { h.stop() }
        _ = dir.write("policy.json", #"{"assistant":{"tools":{"ssh_exec":{"default":"approve","tags":{"prod":{"deny":["touch *"]}}}}}}"#)
        #expect(try h.termhost(["hosts", "edit", "web1", "--tag", "prod"]).status == 0)

        let refused = try h.termhost(["ask", "--acting", "--host", "web1", "touch it"])
        #expect(refused.status == 0, "\(refused.output)")
        #expect(!FileManager.default.fileExists(atPath: marker), "a denied command ran")
        let told = try #require(h.model.requests.dropFirst().first)
        #expect(told.body.contains("assistant.tools.ssh_exec.tags.prod.deny 'touch *'"), "\(told.body)")

        // The host without the tag: the tool's own default (approve) holds, and the command runs.
        #expect(try h.termhost(["hosts", "edit", "web1", "--untag", "prod", "--tag", "staging"]).status == 0)
        #expect(!(try h.termhost(["hosts", "show", "web1"]).stdout.contains("prod")))
        let ran = try h.termhost(["ask", "--acting", "--host", "web1", "touch it"])
        #expect(ran.status == 0, "\(ran.output)")
        #expect(FileManager.default.fileExists(atPath: marker), "\(ran.output)")
    }
}
