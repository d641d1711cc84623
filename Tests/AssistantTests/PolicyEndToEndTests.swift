import Foundation
import Testing
import TestSupport

/// The gate and the redactor inside real runs: the `termhost` binary, the Assistant and SSH
/// plugins, the scripted model on loopback, a real sshd, the SQLite store read as a file.
@Suite(.serialized) struct PolicyEndToEndTests {
    typealias Harness = AssistantRunEndToEndTests.Harness
    typealias Chat = AssistantRunEndToEndTests.Chat

    @Test func anOperatorsDenyRefusesEvenAReadOnlyCommandAndIsAudited() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Harness(dir: dir, script: [
            Chat.calls([AssistantRunEndToEndTests.exec("call_1", "df -h")]),
            Chat.text(["denied"]),
        ])
        defer { h.stop() }
        _ = dir.write("policy.json", #"{"assistant":{"tools":{"ssh_exec":"deny"}}}"#)
        let r = try h.termhost(["ask", "--host", "web1", "how full is the disk?"])
        #expect(r.status == 0, "\(r.output)")
        #expect(h.commandSessions == 0)
        let second = try #require(h.model.requests.dropFirst().first)
        #expect(second.body.contains("refused: ssh_exec is set to deny by operator policy \(dir.path)/policy.json"), "\(second.body)")
        let audit = try h.termhost(["assistant", "audit"])
        #expect(audit.stdout.contains("ssh_exec on web1: refused by policy: df -h"), "\(audit.output)")
    }

    @Test func unattendedAStateChangingCommandIsRefusedWithTheSettingThatAllowsIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Harness(dir: dir, script: [
            Chat.calls([AssistantRunEndToEndTests.exec("call_1", "touch /tmp/never")]),
            Chat.text(["ok"]),
        ])
        defer { h.stop() }
        let r = try h.termhost(["ask", "--acting", "--host", "web1", "touch it"])
        #expect(r.status == 0, "\(r.output)")
        #expect(h.commandSessions == 0)
        let second = try #require(h.model.requests.dropFirst().first)
        #expect(second.body.contains("and no person is present to approve it"), "\(second.body)")
        #expect(second.body.contains(#"set \"assistant\": {\"tools\": {\"ssh_exec\": \"approve\"}}"#), "\(second.body)")
    }

    /// The second layer's canary: credentials a remote command prints never reach the model's
    /// request bodies, the store file or the log.
    @Test func credentialsInToolOutputReachNeitherTheModelNorTheStoreNorTheLog() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let password = "Canary-Pa55word-7731"
        let apiKey = "AKIAQWERTYUIOPASDFGH"
        let planted = dir.write("remote/app.env", "DB_PASSWORD=\(password)\nAWS_ACCESS_KEY_ID=\(apiKey)\n")
        let h = try Harness(dir: dir, script: [
            Chat.calls([AssistantRunEndToEndTests.exec("call_1", "cat \(planted)")]),
            Chat.text(["done"]),
        ])
        defer { h.stop() }
        let r = try h.termhost(["ask", "--host", "web1", "what is in app.env?"])
        #expect(r.status == 0, "\(r.output)")
        #expect(h.commandSessions == 1)
        let bodies = h.model.requests.map(\.body).joined(separator: "\n")
        #expect(bodies.contains("DB_PASSWORD=[redacted]"), "\(bodies)")
        for secret in [password, apiKey] {
            #expect(!bodies.contains(secret))
            #expect(!r.output.contains(secret))
            for file in ["data/termhost/termhost.db", "data/termhost/termhost.db-wal", "state/termhost/termhost.log"] {
                let bytes = FileManager.default.contents(atPath: dir.path + "/" + file) ?? Data()
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) in \(file)")
            }
        }
    }
}
