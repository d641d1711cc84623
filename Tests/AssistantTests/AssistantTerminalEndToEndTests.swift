import Foundation
import Glibc
import Synchronization
import Testing
import TestSupport

/// The assistant at a real terminal (tmux) and its machine-readable output: secrets typed at a
/// prompt that does not echo and used through single-use handles, Ctrl-C in a conversation,
/// `ask --json`. The `termhost` binary, the Assistant and SSH plugins, a real sshd and the
/// scripted model on loopback.
@Suite(.serialized) struct AssistantTerminalEndToEndTests {
    typealias Harness = AssistantRunEndToEndTests.Harness
    typealias Chat = AssistantRunEndToEndTests.Chat

    static func requestSecret(_ id: String, host: String) -> (id: String, name: String, arguments: String) {
        (id, "request_secret", "{\"host\":\"\(host)\",\"purpose\":\"sudo password on \(host)\",\"tool\":\"ssh_exec\"}")
    }

    static func execWithSecret(_ id: String, host: String, handle: String) -> (id: String, name: String, arguments: String) {
        (id, "ssh_exec", "{\"host\":\"\(host)\",\"command\":\"cat\",\"stdin_secret\":\"\(handle)\"}")
    }

    /// The newest handle in a request body.
    static func lastHandle(_ body: String) -> String? {
        body.matches(of: /secret:[0-9a-f]{32}/).last.map { String($0.output) }
    }

    /// The model asks for a secret, uses it once with `cat` (which prints it back), tries the
    /// same handle again, asks for a second one and tries it on another host. The value goes to
    /// the command's stdin only: the model sees "[redacted]"; reuse and the other host are
    /// refused; and the typed value is in no request body, on no screen, in no log line, store
    /// row (the SQLite file and its WAL read directly) or audit record.
    @Test func aSecretTypedAtThePromptReachesOnlyTheCommandsStdinOnce() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let secret = "Typed-Canary-Secret-4519"
        let h = try Harness(dir: dir, script: [Chat.calls([Self.requestSecret("call_1", host: "web1")])])
        defer { h.stop() }
        try h.termhost(["hosts", "add", "web2", "127.0.0.1", "--port", "\(h.ssh.server.port)", "--user", NSUserName()])
        h.model.respond { number, request in
            let handle = Self.lastHandle(request.body) ?? "secret:none"
            return switch number {
            case 1: nil
            case 2: Chat.calls([Self.execWithSecret("call_2", host: "web1", handle: handle)])
            case 3: Chat.calls([Self.execWithSecret("call_3", host: "web1", handle: handle)])
            case 4: Chat.calls([Self.requestSecret("call_4", host: "web1")])
            case 5: Chat.calls([Self.execWithSecret("call_5", host: "web2", handle: handle)])
            default: Chat.text(["done"])
            }
        }
        let tmux = try TmuxSession(command: [Paths.termhost, "ask", "--host", "web1", "restart it with sudo"],
                                   environment: h.ssh.environment, width: 200)
        defer { tmux.close() }
        // capture-pane drops a line's trailing spaces: the prompt "Secret: " reads "Secret:".
        var screen = tmux.waitFor("Secret:")
        #expect(screen.contains("The assistant asks for a secret: sudo password on web1"), "\(screen)")
        tmux.type(secret)
        // A call given a secret is never auto-approved, even a read (cat): the person is asked
        // each time, here for the use, the reuse and the other host (those two the handle refuses).
        screen = tmux.waitFor("Choose 1-")
        #expect(screen.contains("ask because it is given a secret (stdin_secret)"), "\(screen)")
        tmux.type("1")
        _ = tmux.waitFor("Choose 1-", count: 2)
        tmux.type("1")
        screen = tmux.waitFor("Secret:", count: 2)
        tmux.type(secret)
        _ = tmux.waitFor("Choose 1-", count: 3)
        tmux.type("1")
        screen = tmux.waitFor("[exit ")
        #expect(screen.contains("[exit 0]"), "\(screen)")
        #expect(!screen.contains(secret), "echoed: \(screen)")
        #expect(h.commandSessions == 1)

        let bodies = h.model.requests.map(\.body)
        #expect(bodies.count == 6)
        // cat printed the value back: it was on stdin, and the model gets none of the output.
        #expect(bodies[2].contains("[withheld: this call was given a secret (stdin_secret)"), "\(bodies[2])")
        #expect(bodies[2].contains(#"\"exit_status\":0"#), "\(bodies[2])")
        #expect(bodies[3].contains("is unknown or was already used"), "\(bodies[3])")
        #expect(bodies[5].contains("was given for ssh_exec on web1 (sudo password on web1), not for ssh_exec on web2"), "\(bodies[5])")
        let audit = try h.termhost(["assistant", "audit"]).stdout
        #expect(audit.contains("request_secret on web1: approved"), "\(audit)")
        var places = bodies + [audit, try h.termhost(["assistant", "show", "--json", Self.conversation(h)]).stdout]
        for file in ["data/termhost/termhost.db", "data/termhost/termhost.db-wal", "state/termhost/termhost.log"] {
            places.append(String(decoding: FileManager.default.contents(atPath: dir.path + "/" + file) ?? Data(), as: UTF8.self))
        }
        for (i, text) in places.enumerated() { #expect(!text.contains(secret), "the secret is in place \(i)") }
    }

    static func conversation(_ h: Harness) throws -> String {
        try #require(try AssistantRunEndToEndTests.runs(h).first?["conversation"] as? String)
    }

    /// Unattended, request_secret is refused, and so is any call given a stdin_secret (a value
    /// the model put there itself included): only a person approves a call that carries one.
    @Test func withoutATerminalNoSecretIsAskedForAndNoPlainValueIsUsed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Harness(dir: dir, script: [
            Chat.calls([Self.requestSecret("call_1", host: "web1")]),
            Chat.calls([("call_2", "ssh_exec", #"{"host":"web1","command":"cat","stdin_secret":"hunter22"}"#)]),
            Chat.text(["done"]),
        ])
        defer { h.stop() }
        let r = try h.termhost(["ask", "--host", "web1", "restart it with sudo"])
        #expect(r.status == 0, "\(r.output)")
        #expect(h.commandSessions == 0)
        let bodies = h.model.requests.map(\.body)
        #expect(bodies[1].contains("refused: no person is at a terminal to type a secret"), "\(bodies[1])")
        // Refused before anything looks at the value: a call given a secret needs a person.
        #expect(bodies[2].contains("refused: this call is given a secret (stdin_secret), and only a person at the terminal may approve such a call"), "\(bodies[2])")
    }

    /// Ctrl-C while an answer streams in `termhost assistant` stops that run; the program goes
    /// on and answers the next question.
    @Test func ctrlCInAConversationStopsTheRunNotTheProgram() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let stalled = Chat.chunk(#"{"content":"Thinking about it"}"#)
        let h = try Harness(dir: dir, script: [ScriptedHTTPServer.Response(body: stalled, stallAfter: stalled.utf8.count),
                                               Chat.text(["Second answer."])])
        defer { h.stop() }
        let tmux = try TmuxSession(command: [Paths.termhost, "assistant"], environment: h.ssh.environment, width: 200)
        defer { tmux.close() }
        tmux.waitFor(">")
        tmux.type("first question")
        tmux.waitFor("Thinking about it")
        tmux.press("C-c")
        var screen = tmux.waitFor("[stopped]")
        #expect(screen.contains("[stopped]"), "\(screen)")
        tmux.type("second question")
        screen = tmux.waitFor("Second answer.")
        #expect(screen.contains("Second answer."), "\(screen)")
        // The third prompt comes once the run has given the terminal back; Ctrl-D before it
        // would be read as a key of the run.
        tmux.waitFor(">", count: 3)
        tmux.press("C-d")
        screen = tmux.waitFor("[exit ")
        #expect(screen.contains("[exit 0]"), "\(screen)")
        let states = try AssistantRunEndToEndTests.runs(h).map { $0["state"] as? String ?? "" }
        #expect(states.sorted() == ["finished", "stopped"], "\(states)")
    }

    /// `ask --json`: nothing streamed, one object with the run's end and every message.
    @Test func askJSONPrintsOneObject() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Harness(dir: dir, script: [
            Chat.calls([AssistantRunEndToEndTests.exec("call_1", "echo json-run")]),
            Chat.text(["It says ", "json-run."]),
        ])
        defer { h.stop() }
        let r = try h.termhost(["ask", "--json", "--host", "web1", "what does it say?"])
        #expect(r.status == 0, "\(r.output)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["state"] as? String == "finished")
        #expect(object["answer"] as? String == "It says json-run.")
        #expect(object["reason"] is NSNull || object["reason"] == nil)
        let conversation = try #require(object["conversation"] as? String)
        #expect((object["run"] as? String)?.hasPrefix(conversation + ".") == true, "\(object)")
        let messages = try #require(object["messages"] as? [[String: Any]])
        #expect(messages.map { $0["role"] as? String ?? "" } == ["user", "assistant", "tool", "assistant"])
        #expect((messages[2]["text"] as? String)?.contains("json-run") == true, "\(messages[2])")
    }
}
