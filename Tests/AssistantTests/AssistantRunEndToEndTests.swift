import Foundation
import Glibc
import Testing
import TestSupport

/// `termhost ask` and `termhost assistant`, really run: the Assistant and SSH plugins
/// dlopen'd by the `termhost` binary, the model a ScriptedHTTPServer speaking OpenAI Chat
/// Completions on loopback, the tools run on a real sshd, the history read back through the
/// commands and straight from the SQLite file.
@Suite(.serialized) struct AssistantRunEndToEndTests {
    /// A real sshd saved as host `web1`, the Assistant plugin, and the scripted model saved as
    /// provider `scripted`.
    struct Harness {
        let ssh: SSHHarness
        let model: ScriptedHTTPServer

        init(dir: TemporaryDirectory, script: [ScriptedHTTPServer.Response]) throws {
            ssh = try SSHHarness(dir: dir)
            _ = try Fixtures.bundle("libAssistantPlugin.so", as: "org.termhost.assistant", in: ssh.plugins)
            model = ScriptedHTTPServer(script: script)
            try ssh.termhost(["hosts", "add", "web1", "127.0.0.1", "--port", "\(ssh.server.port)", "--user", NSUserName()])
            let added = try ssh.termhost(["assistant", "provider", "add", "scripted", "--kind", "openai-compatible",
                                          "--model", "test-model", "--url", model.baseURL])
            #expect(added.status == 0, "\(added.output)")
        }

        func stop() {
            model.stop()
            ssh.server.stop()
        }

        @discardableResult
        func termhost(_ args: [String], stdin: String? = nil) throws -> Shell.Result { try ssh.termhost(args, stdin: stdin) }

        /// `termhost ARGS` in the background, its output into files under the scratch directory.
        func start(_ args: [String]) throws -> Process {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: Paths.termhost)
            p.arguments = args
            p.environment = ssh.environment
            p.standardInput = FileHandle.nullDevice
            p.standardOutput = FileHandle(forWritingAtPath: ssh.dir.write("bg.out", ""))
            p.standardError = FileHandle(forWritingAtPath: ssh.dir.write("bg.err", ""))
            try p.run()
            return p
        }

        /// How many exec sessions sshd started (LogLevel VERBOSE logs each).
        var commandSessions: Int { ssh.server.log.components(separatedBy: "Starting session: command").count - 1 }

        func json(_ args: [String]) throws -> Any {
            let r = try termhost(args)
            #expect(r.status == 0, "\(r.output)")
            return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8))
        }
    }

    /// Chat Completions stream bodies, as the providers' fixtures record them.
    enum Chat {
        static func chunk(_ delta: String, finish: String? = nil) -> String {
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":\(delta),\"finish_reason\":\(finish.map { "\"\($0)\"" } ?? "null")}]}\n\n"
        }

        static func text(_ pieces: [String]) -> ScriptedHTTPServer.Response {
            let body = pieces.map { chunk("{\"content\":\(quoted($0))}") }.joined() + chunk("{}", finish: "stop") + "data: [DONE]\n\n"
            return ScriptedHTTPServer.Response(body: body)
        }

        static func calls(_ calls: [(id: String, name: String, arguments: String)]) -> ScriptedHTTPServer.Response {
            let deltas = calls.enumerated().map { i, c in
                chunk("{\"tool_calls\":[{\"index\":\(i),\"id\":\"\(c.id)\",\"type\":\"function\",\"function\":{\"name\":\"\(c.name)\",\"arguments\":\(quoted(c.arguments))}}]}")
            }
            return ScriptedHTTPServer.Response(body: deltas.joined() + chunk("{}", finish: "tool_calls") + "data: [DONE]\n\n")
        }

        static func quoted(_ s: String) -> String {
            String(decoding: try! JSONSerialization.data(withJSONObject: [s]), as: UTF8.self).dropFirst().dropLast().description
        }
    }

    static func exec(_ id: String, _ command: String) -> (id: String, name: String, arguments: String) {
        (id, "ssh_exec", "{\"host\":\"web1\",\"command\":\(Chat.quoted(command))}")
    }

    static func runs(_ h: Harness) throws -> [[String: Any]] {
        try #require(try h.json(["assistant", "history", "--json"]) as? [[String: Any]])
    }

    static func messages(_ h: Harness, _ conversation: String) throws -> [[String: Any]] {
        let shown = try #require(try h.json(["assistant", "show", conversation, "--json"]) as? [String: Any])
        return try #require(shown["messages"] as? [[String: Any]])
    }

    @Test func askRunsSSHExecOnTheRealSSHDAndStreamsTheAnswer() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Harness(dir: dir, script: [
            Chat.calls([Self.exec("call_1", "echo from-sshd")]),
            Chat.text(["The host ", "says: from-sshd.\u{1b}[2J"]),
        ])
        defer { h.stop() }
        let r = try h.termhost(["ask", "--host", "web1", "what does web1 say?"])
        #expect(r.status == 0, "\(r.output)")
        // Streamed as it came, the escape sequence made visible.
        #expect(r.stdout == "The host says: from-sshd.\\033[2J\n")
        #expect(h.commandSessions == 1)
        // The model got the tool's real output in its second request.
        let second = try #require(h.model.requests.dropFirst().first)
        #expect(second.body.contains("from-sshd\\\\n") || second.body.contains("from-sshd\\n"), "\(second.body)")
        let run = try #require(try Self.runs(h).first)
        #expect(run["state"] as? String == "finished")
        let conversation = try #require(run["conversation"] as? String)
        let roles = try Self.messages(h, conversation).map { $0["role"] as? String ?? "" }
        #expect(roles == ["user", "assistant", "tool", "assistant"])
    }

    @Test func aRefusedCallIsAnsweredAndTheRunGoesOn() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // A planning run: a command the classifier cannot prove read-only is refused.
        let h = try Harness(dir: dir, script: [
            Chat.calls([Self.exec("call_1", "rm -rf /tmp/x")]),
            Chat.text(["I was not allowed."]),
        ])
        defer { h.stop() }
        let r = try h.termhost(["ask", "clean up"])
        #expect(r.status == 0, "\(r.output)")
        #expect(h.commandSessions == 0)
        let second = try #require(h.model.requests.dropFirst().first)
        #expect(second.body.contains("refused: this is a planning run"), "\(second.body)")
    }

    @Test func aFailedProviderEndsTheRunWithStatus1() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Harness(dir: dir, script: [ScriptedHTTPServer.Response(status: 400, headers: ["Content-Type: application/json"],
                                                                           body: "{\"error\":{\"message\":\"bad model\"}}")])
        defer { h.stop() }
        let r = try h.termhost(["ask", "hello"])
        #expect(r.status == 1, "\(r.output)")
        #expect(try Self.runs(h).first?["state"] as? String == "failed")
    }

    /// SIGKILL while ssh_exec runs; the next start marks the run interrupted, answers the call
    /// "outcome unknown", and replays nothing: the model is asked once, the command ran once.
    @Test func aRunKilledDuringAToolCallIsInterruptedAndNeverReplayed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Harness(dir: dir, script: [Chat.calls([Self.exec("call_1", "sleep 30")]), Chat.text(["never"])])
        defer { h.stop() }
        let p = try h.start(["ask", "--host", "web1", "wait a while"])
        #expect(Wait.until { h.commandSessions == 1 })
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        let run = try #require(try Self.runs(h).first)
        #expect(run["state"] as? String == "interrupted")
        let conversation = try #require(run["conversation"] as? String)
        let tool = try #require(try Self.messages(h, conversation).last)
        #expect(tool["role"] as? String == "tool" && tool["call"] as? String == "call_1")
        #expect(tool["text"] as? String == "outcome unknown: the call may or may not have run (termhost stopped while it was running)")
        // Several starts later, still nothing replayed.
        try h.termhost(["assistant", "history"])
        #expect(h.model.requests.count == 1)
        #expect(h.commandSessions == 1)
        #expect(try Self.messages(h, conversation).count == 3)
    }

    /// SIGTERM while ssh_exec runs: the call is cancelled and awaited, the run saved as
    /// stopped, and the process gone within the 3 s bound.
    @Test func shutdownDuringAToolCallStopsAndSavesTheRunWithinTheBound() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Harness(dir: dir, script: [Chat.calls([Self.exec("call_1", "sleep 30")]), Chat.text(["never"])])
        defer { h.stop() }
        let p = try h.start(["ask", "--host", "web1", "wait a while"])
        #expect(Wait.until { h.commandSessions == 1 })
        let sent = ContinuousClock.now
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        let took = ContinuousClock.now - sent
        #expect(took < .seconds(3), "\(took)")
        #expect(p.terminationStatus == 143)
        let run = try #require(try Self.runs(h).first)
        #expect(run["state"] as? String == "stopped")
        let conversation = try #require(run["conversation"] as? String)
        let tool = try #require(try Self.messages(h, conversation).last)
        #expect(tool["text"] as? String == "cancelled: the run was stopped while this call ran; it may have partly run")
        #expect(h.model.requests.count == 1)
    }

    /// `termhost assistant` without a terminal: each line is one run of the same conversation,
    /// and the model sees the earlier question and answer.
    @Test func aConversationRunsEachLineInTheSameConversation() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Harness(dir: dir, script: [Chat.text(["First answer."]), Chat.text(["Second answer."])])
        defer { h.stop() }
        let r = try h.termhost(["assistant"], stdin: "first question\n\nsecond question\n")
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout == "First answer.\nSecond answer.\n")
        let runs = try Self.runs(h)
        #expect(runs.count == 2 && Set(runs.compactMap { $0["conversation"] as? String }).count == 1)
        #expect(runs.allSatisfy { $0["state"] as? String == "finished" })
        let second = try #require(h.model.requests.dropFirst().first)
        #expect(second.body.contains("first question") && second.body.contains("First answer."), "\(second.body)")
    }

    @Test func historyShowAndRm() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Harness(dir: dir, script: [Chat.text(["Hello."])])
        defer { h.stop() }
        #expect(try h.termhost(["ask", "hi"]).status == 0)
        let run = try #require(try Self.runs(h).first)
        let conversation = try #require(run["conversation"] as? String)
        let shown = try h.termhost(["assistant", "show", conversation])
        #expect(shown.stdout.contains("> hi\nHello.\n"), "\(shown.stdout)")
        #expect(try h.termhost(["assistant", "rm", conversation]).stdout == "removed conversation \(conversation)\n")
        let gone = try h.termhost(["assistant", "show", conversation])
        #expect(gone.status == 1 && gone.stderr == "termhost: assistant show: no conversation '\(conversation)'; 'termhost assistant history' lists them\n")
    }
}
