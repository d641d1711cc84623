import Foundation
import Testing
import TestSupport

/// `termhost mcp` through the real binary, the dlopen'd SSH, SFTP and Assistant plugins and a
/// real sshd, driven by an MCP client nobody here wrote: the official `mcp` package from PyPI
/// (Fixtures/mcp_client.py), plus raw JSON-RPC edge cases written to the server's stdin.
@Suite(.serialized) struct MCPEndToEndTests {
    static let script = Paths.root + "/Tests/AssistantTests/Fixtures/mcp_client.py"
    /// The venv Scripts/setup.sh installs PyPI's `mcp` into.
    static let python = Paths.root + "/.build/mcp-client/bin/python3"

    /// The sshd harness with its server saved as 'lab', the SFTP and Assistant plugins beside
    /// the SSH plugin, and a user config that denies sftp_write (or the `tools` given).
    static func lab(_ dir: TemporaryDirectory, tools: String = #"{"sftp_write": "deny"}"#) throws -> SSHHarness {
        let h = try SSHHarness(dir: dir)
        try Fixtures.sftpPlugin(in: h.plugins)
        _ = try Fixtures.bundle("libAssistantPlugin.so", as: "org.termhost.assistant", in: h.plugins)
        let add = try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(),
                                  "--identity", h.key.privatePath])
        #expect(add.status == 0, "\(add.output)")
        _ = dir.write("config/termhost/config.json", #"{"assistant": {"tools": \#(tools)}}"#)
        return h
    }

    /// Runs the client script; its lines by step (a step seen more than once keeps each).
    static func client(_ h: SSHHarness, _ scenario: String, _ arguments: [String] = []) throws -> (steps: [[String: Any]], result: Shell.Result) {
        let r = try Shell.run(python, [script, Paths.termhost, scenario, "lab"] + arguments,
                              environment: h.environment, timeout: 120)
        let steps = r.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
        return (steps, r)
    }

    static func step(_ steps: [[String: Any]], _ name: String) -> [String: Any] {
        steps.first { $0["step"] as? String == name } ?? [:]
    }

    static func audit(_ h: SSHHarness) throws -> String { try h.termhost(["assistant", "audit"]).stdout }

    @Test func theOfficialClientListsAnnotatedToolsAndCallsThemUnderThePolicy() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        let (steps, r) = try Self.client(h, "catalog", [dir.path])
        #expect(r.status == 0, "\(r.output)")
        let initialize = Self.step(steps, "initialize")
        #expect(initialize["protocol"] as? String == "2025-11-25" && initialize["name"] as? String == "termhost", "\(r.output)")

        let tools = steps.filter { $0["step"] as? String == "tool" }
        let byName = Dictionary(tools.map { ($0["name"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        #expect(["list_hosts", "ssh_exec", "sftp_read", "sftp_write"].allSatisfy { byName[$0] != nil }, "\(r.stdout)")
        #expect(byName["list_hosts"]?["read_only"] as? Bool == true && byName["list_hosts"]?["destructive"] as? Bool == false)
        #expect(byName["list_hosts"]?["idempotent"] as? Bool == true && byName["list_hosts"]?["schema_type"] as? String == "object")
        #expect(byName["ssh_exec"]?["read_only"] as? Bool == false && byName["ssh_exec"]?["destructive"] as? Bool == true)
        #expect(byName["ssh_exec"]?["open_world"] as? Bool == true && byName["ssh_exec"]?["idempotent"] as? Bool == false)
        let denied = byName["sftp_write"]?["description"] as? String ?? ""
        #expect(denied.hasSuffix("(Termhost's policy denies this tool: user config \(dir.path)/config/termhost/config.json (assistant.tools.sftp_write). Calls are refused.)"), "\(denied)")

        let hosts = Self.step(steps, "list_hosts")
        #expect(hosts["is_error"] as? Bool == false && (hosts["text"] as? String ?? "").contains("\"id\":\"lab\""), "\(hosts)")
        #expect(!(hosts["text"] as? String ?? "").contains(h.key.privatePath), "the client never sees a credential's path")

        let exec = Self.step(steps, "read_only_exec")
        let execResult = (try? JSONSerialization.jsonObject(with: Data((exec["text"] as? String ?? "").utf8))) as? [String: Any]
        #expect(exec["is_error"] as? Bool == false && execResult?["stdout"] as? String == "Linux\n", "\(exec)")
        let progress = Self.step(steps, "progress")["notifications"] as? [[Any]] ?? []
        #expect(progress.first?.last as? String == "ssh_exec started", "\(progress)")

        let ask = Self.step(steps, "ask_exec")
        #expect(ask["is_error"] as? Bool == true, "\(ask)")
        #expect((ask["text"] as? String ?? "").contains(#"set "assistant": {"tools": {"ssh_exec": "approve"}} in the user config"#), "\(ask)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/asked"), "an Ask without elicitation never runs")

        let write = Self.step(steps, "denied_write")
        #expect(write["is_error"] as? Bool == true, "\(write)")
        #expect(write["text"] as? String == "refused: sftp_write is set to deny by user config \(dir.path)/config/termhost/config.json (assistant.tools.sftp_write); only a change there can allow it", "\(write)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/denied"))

        let audit = try Self.audit(h)
        #expect(audit.contains("sftp_write on lab: refused by policy"), "\(audit)")
        #expect(audit.contains("ssh_exec on lab: approved by policy: uname -s (approve by the default for read-only calls)"), "\(audit)")
        #expect(audit.contains("ssh_exec on lab: refused by policy: touch \(dir.path)/asked"), "\(audit)")
    }

    @Test func anAskGoesToThePersonThroughElicitationShowingExactlyWhatWillRun() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        let (steps, r) = try Self.client(h, "elicit", [dir.path])
        #expect(r.status == 0, "\(r.output)")
        let asked = steps.filter { $0["step"] as? String == "elicitation" }.compactMap { $0["message"] as? String }
        #expect(asked.count == 2, "\(r.output)")
        #expect(asked.first?.hasPrefix("The assistant wants to run ssh_exec on host lab:\n  command: touch \(dir.path)/accept-me\n  working directory: (the login directory)\n  why asked: ask by the default for state-changing calls") == true, "\(asked)")
        #expect(Self.step(steps, "accepted")["is_error"] as? Bool == false, "\(r.output)")
        #expect(FileManager.default.fileExists(atPath: dir.path + "/accept-me"), "accepted: it ran")
        let declined = Self.step(steps, "declined")
        #expect(declined["is_error"] as? Bool == true && declined["text"] as? String == "refused by the person at the terminal", "\(declined)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/declined"), "declined: it did not run")
        let audit = try Self.audit(h)
        #expect(audit.contains("approved by person: touch \(dir.path)/accept-me"), "\(audit)")
        #expect(audit.contains("refused by person: touch \(dir.path)/declined"), "\(audit)")
    }

    @Test func aCancelledCallEndsPromptlyAndTheSessionGoesOn() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        let (steps, r) = try Self.client(h, "cancel")
        #expect(r.status == 0, "\(r.output)")
        #expect((Self.step(steps, "abandoned")["seconds"] as? Double ?? 99) < 5, "\(r.output)")
        // The ping is answered at once even while the cancelled call winds down.
        #expect((Self.step(steps, "ping")["seconds"] as? Double ?? 99) < 6, "\(r.output)")
        #expect(Self.step(steps, "list_hosts_after")["is_error"] as? Bool == false, "\(r.output)")
        // The SDK closes stdin and waits 2 s before it sends SIGTERM: the server ended by itself.
        #expect((Self.step(steps, "closed")["seconds"] as? Double ?? 99) < 2, "\(r.output)")
    }

    @Test func malformedUnknownBatchedAndOversizedMessagesGetTheSpecificationsErrors() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        _ = try Fixtures.bundle("libAssistantPlugin.so", as: "org.termhost.assistant", in: plugins)
        let big = #"{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":""# + String(repeating: "a", count: 4 << 20) + #""}}"#
        let input = ["nonsense", #"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                     #"{"jsonrpc":"2.0","id":2,"method":"resources/list"}"#, #"{"jsonrpc":"1.0","id":3,"method":"ping"}"#,
                     #"{"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}"#, #"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
                     big, #"{"jsonrpc":"2.0","id":"after","method":"ping"}"#,
                     #"{"jsonrpc":"2.0","method":"notifications/unknown"}"#,
                     #"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}"#]
        let r = try Shell.run(Paths.termhost, ["mcp"], environment: Fixtures.environment(dir, pluginPath: plugins),
                              stdin: input.joined(separator: "\n") + "\n")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.split(separator: "\n").map(String.init) == [
            #"{"error":{"code":-32700,"message":"the message is not JSON"},"id":null,"jsonrpc":"2.0"}"#,
            #"{"error":{"code":-32600,"message":"batches are not supported (MCP sends one message per line)"},"id":null,"jsonrpc":"2.0"}"#,
            #"{"error":{"code":-32601,"message":"method 'resources/list' is not supported by termhost mcp"},"id":2,"jsonrpc":"2.0"}"#,
            #"{"error":{"code":-32600,"message":"\"jsonrpc\" must be \"2.0\""},"id":3,"jsonrpc":"2.0"}"#,
            #"{"error":{"code":-32602,"message":"\"params\" must be an object"},"id":4,"jsonrpc":"2.0"}"#,
            #"{"error":{"code":-32600,"message":"\"id\" must be a string or an integer"},"id":null,"jsonrpc":"2.0"}"#,
            #"{"error":{"code":-32600,"message":"the message is \#(big.utf8.count) bytes, more than the 4194304 one line may have"},"id":null,"jsonrpc":"2.0"}"#,
            #"{"id":"after","jsonrpc":"2.0","result":{}}"#,
            #"{"error":{"code":-32602,"message":"unknown tool 'nope'; tools/list names the tools"},"id":5,"jsonrpc":"2.0"}"#,
        ], "\(r.stdout)")
        #expect(r.stderr == "termhost mcp: a message of \(big.utf8.count) bytes refused (at most 4194304 per line)\n")
    }

    /// `termhost mcp` with its stdin and stdout as pipes, a call of `sleep 30` started on 'lab'
    /// (whose ssh_exec the user config approves).
    static func sleeping(_ h: SSHHarness, _ dir: TemporaryDirectory) throws -> (Process, Pipe, Pipe) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Paths.termhost)
        p.arguments = ["mcp"]
        p.environment = h.environment
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = FileHandle.nullDevice
        try p.run()
        let marker = dir.path + "/started"
        let call = #"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ssh_exec","arguments":{"host":"lab","command":"touch \#(marker); sleep 30","timeout_seconds":60}}}"#
        input.fileHandleForWriting.write(Data((call + "\n").utf8))
        #expect(Wait.until(timeout: 120) { FileManager.default.fileExists(atPath: marker) }, "the command never started")
        return (p, input, output)
    }

    /// Issue 27 item 9: 50 calls sent at once are all run and answered (beyond the 16 in flight
    /// they wait their turn), none refused for being too many.
    @Test func fiftyCallsAtOnceAreQueuedAndAllAnswered() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Paths.termhost)
        p.arguments = ["mcp"]
        p.environment = h.environment
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = FileHandle.nullDevice
        try p.run()
        let lines = (1...50).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"tools/call","params":{"name":"list_hosts","arguments":{}}}"# }
        input.fileHandleForWriting.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        let received = UnsafeSendableBox<[String]>([])
        let reader = Thread {
            var pending = Data()
            while case let chunk = output.fileHandleForReading.availableData, !chunk.isEmpty {
                pending.append(chunk)
                while let nl = pending.firstIndex(of: 0x0A) {
                    received.append(String(decoding: pending[..<nl], as: UTF8.self))
                    pending = Data(pending[(nl + 1)...])
                }
            }
        }
        reader.start()
        #expect(Wait.until(timeout: 60) { received.value.count >= 50 }, "\(received.value.count) answers")
        try input.fileHandleForWriting.close()
        #expect(Wait.until(timeout: 10) { !p.isRunning })
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        let answers = received.value
        #expect(answers.count == 50)
        #expect(answers.allSatisfy { $0.contains(#""isError":false"#) && !$0.contains("already running") }, "\(answers.filter { !$0.contains(#""isError":false"#) })")
    }

    /// Calls held while one runs alone hold their arguments: beyond 64 MiB in all (22 calls of
    /// 3 MiB), the next is refused at once, saying why, instead of the server holding up to
    /// 256 lines of 4 MiB (1 GiB); the calls held are answered when input ends.
    @Test func argumentsHeldByWaitingCallsAreBounded() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir, tools: #"{"wait_cancel": "approve"}"#)
        defer { h.server.stop() }
        try Fixtures.toolsPlugin(in: h.plugins)
        let started = dir.path + "/started"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Paths.termhost)
        p.arguments = ["mcp"]
        p.environment = h.environment.merging(["TOOLS_FIXTURE_STARTED": started]) { $1 }
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        let received = UnsafeSendableBox<[String]>([])
        let reader = Thread {
            var pending = Data()
            while case let chunk = output.fileHandleForReading.availableData, !chunk.isEmpty {
                pending.append(chunk)
                while let nl = pending.firstIndex(of: 0x0A) {
                    received.append(String(decoding: pending[..<nl], as: UTF8.self))
                    pending = Data(pending[(nl + 1)...])
                }
            }
        }
        reader.start()
        input.fileHandleForWriting.write(Data((#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait_cancel","arguments":{}}}"# + "\n").utf8))
        #expect(Wait.until(timeout: 120) { FileManager.default.fileExists(atPath: started) }, "the tool never started")
        let pad = String(repeating: "x", count: 3 << 20)
        for id in 2...30 {
            let line = #"{"jsonrpc":"2.0","id":\#(id),"method":"tools/call","params":{"name":"wait_cancel","arguments":{"pad":"\#(pad)"}}}"#
            input.fileHandleForWriting.write(Data((line + "\n").utf8))
        }
        #expect(Wait.until(timeout: 120) { received.value.contains { $0.contains("bytes of arguments") } }, "\(received.value.map { $0.prefix(200) })")
        try input.fileHandleForWriting.close()
        #expect(Wait.until(timeout: 120) { !p.isRunning })
        p.waitUntilExit()
        let answers = received.value
        #expect(answers.count == 30, "\(answers.count) answers")
        let refused = answers.filter { $0.contains("(at most 67108864); wait for one to finish") }
        #expect((5...9).contains(refused.count), "\(refused.count) refused")
    }

    @Test func theEndOfInputCancelsARunningCallAndEndsWithin3Seconds() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir, tools: #"{"ssh_exec": "approve"}"#)
        defer { h.server.stop() }
        let (p, input, output) = try Self.sleeping(h, dir)
        let closed = Date()
        try input.fileHandleForWriting.close()
        #expect(Wait.until(timeout: 10) { !p.isRunning })
        #expect(Date().timeIntervalSince(closed) < 3, "termhost mcp took \(Date().timeIntervalSince(closed)) s to end")
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let answer = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(answer == #"{"id":1,"jsonrpc":"2.0","result":{"content":[{"text":"cancelled while it ran: it may have partly run","type":"text"}],"isError":true}}"# + "\n", "\(answer)")
    }

    /// A tool slow to honour its cancel (the fixture's wait_cancel, 10 s late; ssh_exec waits up
    /// to 2 s for the server to confirm a channel's close) still gets its one answer when input
    /// ends: the server answers for it instead of exiting with the call unanswered.
    @Test func aCallSlowToHonourItsCancelIsAnsweredWhenInputEnds() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir, tools: #"{"wait_cancel": "approve"}"#)
        defer { h.server.stop() }
        try Fixtures.toolsPlugin(in: h.plugins)
        let started = dir.path + "/started"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Paths.termhost)
        p.arguments = ["mcp"]
        p.environment = h.environment.merging(["TOOLS_FIXTURE_STARTED": started, "TOOLS_FIXTURE_CANCEL_DELAY_MS": "10000"]) { $1 }
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        let call = #"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait_cancel","arguments":{}}}"#
        input.fileHandleForWriting.write(Data((call + "\n").utf8))
        #expect(Wait.until(timeout: 120) { FileManager.default.fileExists(atPath: started) }, "the tool never started")
        try input.fileHandleForWriting.close()
        #expect(Wait.until(timeout: 120) { !p.isRunning })
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let answer = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(answer == #"{"id":7,"jsonrpc":"2.0","result":{"content":[{"text":"cancelled while it ran: it may have partly run","type":"text"}],"isError":true}}"# + "\n", "\(answer)")
    }

    @Test func sigtermCancelsARunningCallAndEndsWithin3Seconds() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir, tools: #"{"ssh_exec": "approve"}"#)
        defer { h.server.stop() }
        let (p, input, _) = try Self.sleeping(h, dir)
        defer { try? input.fileHandleForWriting.close() }
        let signalled = Date()
        kill(p.processIdentifier, SIGTERM)
        #expect(Wait.until(timeout: 10) { !p.isRunning })
        #expect(Date().timeIntervalSince(signalled) < 3, "termhost mcp took \(Date().timeIntervalSince(signalled)) s to end")
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        #expect(p.terminationStatus == 143)
    }

    @Test func aPlanningSessionOffersReadOnlyToolsAndRefusesWhatCouldChangeState() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        try Fixtures.sshPlugin(in: plugins)
        try Fixtures.sftpPlugin(in: plugins)
        _ = try Fixtures.bundle("libAssistantPlugin.so", as: "org.termhost.assistant", in: plugins)
        let input = [#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
                     #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ssh_exec","arguments":{"host":"lab","command":"rm -rf /srv"}}}"#,
                     #"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sftp_write","arguments":{"host":"lab","path":"/x","content":""}}}"#]
        // Input stays open until the answers are in: its end would cancel the calls.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Paths.termhost)
        p.arguments = ["mcp", "--planning"]
        p.environment = Fixtures.environment(dir, pluginPath: plugins)
        let stdin = Pipe(), stdout = Pipe()
        p.standardInput = stdin
        p.standardOutput = stdout
        p.standardError = FileHandle.nullDevice
        try p.run()
        stdin.fileHandleForWriting.write(Data((input.joined(separator: "\n") + "\n").utf8))
        var received = Data()
        #expect(Wait.until(timeout: 120) {
            received.append(stdout.fileHandleForReading.availableData)
            return received.filter { $0 == UInt8(ascii: "\n") }.count >= 3
        })
        try stdin.fileHandleForWriting.close()
        p.waitUntilExit()
        let r = (status: p.terminationStatus, stdout: String(decoding: received, as: UTF8.self))
        #expect(r.status == 0)
        let answers = r.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }.sorted { "\($0["id"] ?? "")" < "\($1["id"] ?? "")" }
        #expect(answers.count == 3, "\(r.stdout)")
        let tools = ((answers.first?["result"] as? [String: Any])?["tools"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(tools.contains("ssh_exec") && tools.contains("list_hosts") && tools.contains("sftp_read"), "\(tools)")
        #expect(!tools.contains("sftp_write") && !tools.contains("sftp_copy"), "\(tools)")
        let exec = (answers.dropFirst().first?["result"] as? [String: Any])?["content"] as? [[String: Any]]
        let execText: String = exec?.first?["text"] as? String ?? ""
        #expect(execText.hasPrefix("refused: this is a planning run, which uses read-only tools only, and this call could change state"), "\(r.stdout)")
        let write = answers.last?["error"] as? [String: Any]
        #expect(write?["code"] as? Int == -32602 && write?["message"] as? String == "unknown tool 'sftp_write'; tools/list names the tools", "\(r.stdout)")
    }
}
