import Foundation
import Testing
import TestSupport

/// `--full-access` and `--reviewer NAME` on real runs: the `termhost` binary, the Assistant and
/// SSH plugins, a real sshd, the scripted model and a second scripted server as the reviewer's
/// provider, each decision read back through `termhost assistant audit`.
@Suite(.serialized) struct RunAccessEndToEndTests {
    typealias Harness = AssistantRunEndToEndTests.Harness
    typealias Chat = AssistantRunEndToEndTests.Chat

    /// A run whose model asks once for `touch FILE` (state-changing, so an Ask) and then answers.
    static func touching(_ dir: TemporaryDirectory) -> (file: String, script: [ScriptedHTTPServer.Response]) {
        let file = dir.path + "/touched"
        return (file, [Chat.calls([AssistantRunEndToEndTests.exec("call_1", "touch \(file)")]), Chat.text(["done"])])
    }

    /// The reviewer's provider: its own scripted server, saved as `reviewer`.
    static func reviewer(_ h: Harness, _ script: [ScriptedHTTPServer.Response]) throws -> ScriptedHTTPServer {
        let server = ScriptedHTTPServer(script: script)
        let added = try h.termhost(["assistant", "provider", "add", "reviewer", "--kind", "openai-compatible",
                                    "--model", "review-model", "--url", server.baseURL])
        #expect(added.status == 0, "\(added.output)")
        return server
    }

    static func audit(_ h: Harness) throws -> String { try h.termhost(["assistant", "audit"]).stdout }

    static func toolResult(_ h: Harness) throws -> String {
        try #require(h.model.requests.dropFirst().first).body
    }

    @Test func fullAccessPreApprovesAnAskUnattended() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (file, script) = Self.touching(dir)
        let h = try Harness(dir: dir, script: script)
        defer { h.stop() }
        let r = try h.termhost(["ask", "--acting", "--full-access", "--host", "web1", "touch it"])
        #expect(r.status == 0, "\(r.output)")
        #expect(h.commandSessions == 1)
        #expect(FileManager.default.fileExists(atPath: file))
        #expect(try Self.audit(h).contains("ssh_exec on web1: approved by full-access: touch \(file) (ask by the default for state-changing calls"))
    }

    @Test func fullAccessNeverLiftsADeny() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (file, script) = Self.touching(dir)
        let h = try Harness(dir: dir, script: script)
        defer { h.stop() }
        _ = dir.write("policy.json", #"{"assistant":{"tools":{"ssh_exec":"deny"}}}"#)
        let r = try h.termhost(["ask", "--acting", "--full-access", "--host", "web1", "touch it"])
        #expect(r.status == 0, "\(r.output)")
        #expect(h.commandSessions == 0)
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try Self.toolResult(h).contains("refused: ssh_exec is set to deny by operator policy"))
        #expect(try Self.audit(h).contains("ssh_exec on web1: refused by policy: touch \(file)"))
    }

    @Test func fullAccessTurnedOffByThePolicyIsSaidAndHasNoEffect() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (_, script) = Self.touching(dir)
        let h = try Harness(dir: dir, script: script)
        defer { h.stop() }
        _ = dir.write("policy.json", #"{"assistant":{"fullAccess":false}}"#)
        let r = try h.termhost(["ask", "--acting", "--full-access", "--host", "web1", "touch it"])
        #expect(r.stderr.contains("warning: --full-access has no effect: the assistant policy turns full access off"), "\(r.output)")
        #expect(h.commandSessions == 0)
        #expect(try Self.toolResult(h).contains("no person is present to approve it"))
    }

    @Test func theReviewersApproveRunsTheCall() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (file, script) = Self.touching(dir)
        let h = try Harness(dir: dir, script: script)
        defer { h.stop() }
        let reviewer = try Self.reviewer(h, [Chat.text([#"{"decision":"approve","reason":"it only creates the file asked for"}"#])])
        defer { reviewer.stop() }
        let r = try h.termhost(["ask", "--provider", "scripted", "--reviewer", "reviewer", "--acting", "--host", "web1", "touch it"])
        #expect(r.status == 0, "\(r.output)")
        #expect(h.commandSessions == 1)
        #expect(FileManager.default.fileExists(atPath: file))
        // The reviewer saw the person's request and the exact command, and was offered no tools.
        let review = try #require(reviewer.requests.first).body
        #expect(review.contains("touch it") && review.contains("touch \(file)") && !review.contains("\"tools\""), "\(review)")
        #expect(try Self.audit(h).contains("approved by reviewer: touch \(file)"))
        #expect(try Self.audit(h).contains("reviewer: it only creates the file asked for"))
    }

    @Test func theReviewersDenyRefusesTheCall() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (file, script) = Self.touching(dir)
        let h = try Harness(dir: dir, script: script)
        defer { h.stop() }
        let reviewer = try Self.reviewer(h, [Chat.text([#"{"decision":"deny","reason":"not needed"}"#])])
        defer { reviewer.stop() }
        let r = try h.termhost(["ask", "--provider", "scripted", "--reviewer", "reviewer", "--acting", "--host", "web1", "touch it"])
        #expect(r.status == 0, "\(r.output)")
        #expect(h.commandSessions == 0)
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try Self.toolResult(h).contains("refused by the reviewer: not needed"))
        #expect(try Self.audit(h).contains("refused by reviewer: touch \(file)"))
    }

    /// Malformed, a 500 (retried past the reviewer's timeout) or no answer at all: unattended,
    /// the call is refused; each is audited as unavailable, then refused.
    @Test(arguments: ["malformed", "500", "silent"])
    func aReviewerThatCannotDecideRefusesUnattended(_ failure: String) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (file, script) = Self.touching(dir)
        let h = try Harness(dir: dir, script: script)
        defer { h.stop() }
        let answer: ScriptedHTTPServer.Response = switch failure {
        case "malformed": Chat.text([#"Sure! {"decision":"approve","reason":"fine"}"#])
        case "500": ScriptedHTTPServer.Response(status: 500, headers: [], body: "down")
        default: ScriptedHTTPServer.Response(body: "", stallAfter: 0)
        }
        let reviewer = try Self.reviewer(h, Array(repeating: answer, count: 6))
        defer { reviewer.stop() }
        let r = try h.termhost(["ask", "--provider", "scripted", "--reviewer", "reviewer", "--reviewer-timeout", "2",
                                "--acting", "--host", "web1", "touch it"])
        #expect(r.status == 0, "\(r.output)")
        #expect(h.commandSessions == 0)
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try Self.toolResult(h).contains("refused: the reviewer could not decide"))
        let audit = try Self.audit(h)
        #expect(audit.contains("unavailable by reviewer: touch \(file)"), "\(audit)")
        #expect(audit.contains("refused by reviewer: touch \(file)"), "\(audit)")
    }

    /// With a person at the terminal, a reviewer that cannot decide hands the call to them.
    @Test func aReviewerThatCannotDecideFallsBackToThePerson() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (file, script) = Self.touching(dir)
        let h = try Harness(dir: dir, script: script)
        defer { h.stop() }
        let reviewer = try Self.reviewer(h, [Chat.text(["{\"decision\":\"maybe\",\"reason\":\"unsure\"}"])])
        defer { reviewer.stop() }
        let tmux = try TmuxSession(command: [Paths.termhost, "ask", "--provider", "scripted", "--reviewer", "reviewer",
                                             "--acting", "--host", "web1", "touch it"], environment: h.ssh.environment, width: 200)
        defer { tmux.close() }
        let screen = tmux.waitFor("Choose 1-")
        #expect(screen.contains("The assistant wants to run ssh_exec on host web1:") && screen.contains("touch \(file)"), "\(screen)")
        tmux.type("1")
        let end = tmux.waitFor("[exit ")
        #expect(end.contains("[exit 0]"), "\(end)")
        #expect(h.commandSessions == 1)
        let audit = try Self.audit(h)
        #expect(audit.contains("unavailable by reviewer: touch \(file)"), "\(audit)")
        #expect(audit.contains("approved by person: touch \(file)"), "\(audit)")
    }

    @Test func reviewerOptionsAreCheckedBeforeTheRun() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Harness(dir: dir, script: [])
        defer { h.stop() }
        let unknown = try h.termhost(["ask", "--reviewer", "nobody", "hi"])
        #expect(unknown.status == 1 && unknown.stderr.contains("no provider named 'nobody'"), "\(unknown.output)")
        let range = try h.termhost(["ask", "--reviewer", "scripted", "--reviewer-timeout", "0", "hi"])
        #expect(range.status == 2, "\(range.output)")
        let alone = try h.termhost(["ask", "--reviewer-timeout", "5", "hi"])
        #expect(alone.status == 2 && alone.stderr.contains("--reviewer-timeout needs --reviewer NAME"), "\(alone.output)")
        #expect(h.model.requests.isEmpty)
    }
}
