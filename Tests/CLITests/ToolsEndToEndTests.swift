import Foundation
import Testing
import TestSupport

/// Tools (services/tools.h, ABI 1.3) through the real binary: `termhost tools` lists the catalog
/// from manifests, `termhost tools call` runs one through termhost.tools/1's checks, against the
/// C and Swift examples and Tests/Fixtures/tools-plugin.c, each really compiled and dlopen'd.
@Suite struct ToolsEndToEndTests {
    /// Tests/Fixtures/tools-plugin.c in `<parent>/tools` (Fixtures.toolsPlugin); `bad`: its
    /// -DBAD_TOOLS variant, whose manifest the test writes, since `termhost plugins manifest`
    /// refuses to derive one for tools it would refuse.
    static func toolsPlugin(in parent: String, bad: Bool = false, defines: [String] = []) throws {
        let dir = try Fixtures.toolsPlugin(in: parent, defines: (bad ? ["BAD_TOOLS"] : []) + defines, deriveManifest: !bad)
        guard bad else { return }
        let empty = #"{"type": "object", "properties": {}, "additionalProperties": false}"#
        func tool(_ name: String, _ description: String, _ schema: String = empty, readOnly: Bool = false, parallel: Bool = false) -> String {
            #"{ "name": "\#(name)", "description": "\#(description)", "inputSchema": \#(schema), "readOnly": \#(readOnly), "parallelSafe": \#(parallel), "modes": ["planning", "acting"] }"#
        }
        let echo = tool("echo_args", "Returns its arguments.", #"{"type": "object", "properties": {"text": {"type": "string", "maxLength": 10}, "count": {"type": "integer", "minimum": 1, "maximum": 5}, "mode": {"enum": ["a", "b"]}}, "required": ["text"], "additionalProperties": false}"#,
                        readOnly: true, parallel: true)
        let main = [echo, tool("Bad-Name", "A name with capitals and '-'."), tool("no_description", ""),
                    tool("uses_pattern", "Its schema uses pattern.", #"{"type": "object", "properties": {"host": {"type": "string", "pattern": "^[a-z]+$"}}}"#),
                    tool("broken_schema", "Its schema is not JSON.", #""{\"type\":""#)]
        _ = FileManager.default.createFile(atPath: dir + "/manifest.json", contents: Data("""
        { "id": "org.test.tools", "version": "1.0.0", "abi": "\(CancelEndToEndTests.abi)", "library": "libtools.so", "features": [
          { "id": "org.test.tools", "version": "1.0.0", "order": 100, "tools": [\(main.joined(separator: ", "))] },
          { "id": "org.test.tools.scene", "version": "1.0.0", "order": 110, "scope": "scene",
            "tools": [\(tool("scene_tool", "Offered by a scene feature."))] },
          { "id": "org.test.tools.other", "version": "1.0.0", "order": 120, "tools": [\(echo)] } ] }
        """.utf8))
    }

    struct Setup {
        let dir = TemporaryDirectory()
        var cli: CLI
        var log: String { dir.path + "/tool-calls.log" }
        var started: String { dir.path + "/started" }
        init(bad: Bool = false) throws {
            cli = CLI(dir)
            cli.extraEnvironment = ["TOOLS_FIXTURE_LOG": dir.path + "/tool-calls.log", "TOOLS_FIXTURE_STARTED": dir.path + "/started"]
            try ToolsEndToEndTests.toolsPlugin(in: cli.plugins, bad: bad)
        }
        var calls: [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
    }

    @Test func theCatalogListsTheCAndSwiftExamplesToolsAndCallRunsBoth() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.helloC(in: cli.plugins)
        try Fixtures.helloSwift(in: cli.plugins)
        let list = try cli.run("tools")
        #expect(list.status == 0, "\(list.output)")
        #expect(list.stdout == """
        TOOL         FEATURE                            ACCESS     PARALLEL  MODES            DESCRIPTION
        hello_greet  org.termhost.examples.hello-swift  read-only  yes       planning,acting  Makes a greeting for someone, without counting it. Use it to say hello.
        local_time   org.termhost.examples.hello-c      read-only  yes       planning,acting  The local date, time and time zone of the machine termhost runs on (not…

        """)
        let json = try JSONSerialization.jsonObject(with: Data(try cli.run("tools", "--json").stdout.utf8)) as! [[String: Any]]
        #expect(json.map { $0["name"] as? String } == ["hello_greet", "local_time"])
        #expect(json[1]["feature"] as? String == "org.termhost.examples.hello-c")
        #expect(json[1]["read_only"] as? Bool == true && json[1]["parallel_safe"] as? Bool == true)
        #expect(json[1]["modes"] as? [String] == ["planning", "acting"])
        #expect((json[0]["input_schema"] as? [String: Any])?["type"] as? String == "object")

        let time = try cli.run("tools", "call", "local_time")
        #expect(time.status == 0, "\(time.output)")
        let answer = try JSONSerialization.jsonObject(with: Data(time.stdout.utf8)) as? [String: String]
        #expect(answer?["local_time"]?.count == 24, "\(time.stdout)")
        let greet = try cli.run("tools", "call", "hello_greet", #"{"name": "Ann"}"#)
        #expect(greet.status == 0 && greet.stdout == "{\"greeting\":\"Hello, Ann!\"}\n", "\(greet.output)")
        let wrapped = try cli.run("--json", "tools", "call", "hello_greet", "{}")
        #expect(wrapped.stdout == "{\"tool\":\"hello_greet\",\"ok\":true,\"result\":{\"greeting\":\"Hello, world!\"}}\n")

        // Refused by the host before either plugin sees the call.
        let extra = try cli.run("tools", "call", "local_time", #"{"zone": "UTC"}"#)
        #expect(extra.status == 2 && extra.stderr == "termhost tools call: tool 'local_time': argument 'zone' is not one this tool takes (it takes none)\n")
        let long = try cli.run("tools", "call", "hello_greet", "{\"name\": \"\(String(repeating: "a", count: 101))\"}")
        #expect(long.status == 2 && long.stderr == "termhost tools call: tool 'hello_greet': argument 'name' is 101 characters, more than the 100 it may have\n")
        let unknown = try cli.run("tools", "call", "local_tim")
        #expect(unknown.status == 2 && unknown.stderr == "termhost tools call: no enabled feature offers tool 'local_tim'. Did you mean 'local_time'?\n")
    }

    @Test func badToolsAreRefusedOneByOneAndNamed() throws {
        let s = try Setup(bad: true)
        defer { s.dir.remove() }
        let list = try s.cli.run("tools")
        #expect(list.status == 0, "\(list.output)")
        let names = list.stdout.split(separator: "\n").dropFirst().compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(names == ["echo_args", "warning:", "warning:", "warning:", "warning:", "warning:", "warning:"], "\(list.stdout)")
        for warning in [
            "warning: feature 'org.test.tools' offers tool 'Bad-Name', refused: its name is not a valid tool name (a lowercase letter, then lowercase letters, digits and '_')",
            "warning: feature 'org.test.tools' offers tool 'no_description', refused: it has no description (the model chooses tools by it)",
            "warning: feature 'org.test.tools' offers tool 'uses_pattern', refused: its input_schema uses 'pattern' at host, which the host does not check (it supports additionalProperties, description, enum, items, maxLength, maximum, minimum, properties, required, type)",
            "warning: feature 'org.test.tools' offers tool 'broken_schema', refused: its input_schema is not a JSON object",
            "warning: feature 'org.test.tools.scene' offers tool 'scene_tool', refused: only process-scope features may offer tools, and it is scene-scope",
            "warning: tool 'echo_args' is offered by both 'org.test.tools' and 'org.test.tools.other'; 'org.test.tools' keeps it and the one of 'org.test.tools.other' was refused",
        ] {
            #expect(list.stdout.contains(warning + "\n"), "\(warning)\n\(list.stdout)")
        }
        let doctor = try s.cli.run("doctor")
        #expect(doctor.stdout.contains("offers tool 'uses_pattern', refused"), "\(doctor.output)")
        let refused = try s.cli.run("tools", "call", "uses_pattern")
        #expect(refused.status == 2)
        #expect(refused.stderr.hasPrefix("termhost tools call: no tool 'uses_pattern': feature 'org.test.tools' offers tool 'uses_pattern', refused: its input_schema uses 'pattern'"))
        #expect(s.calls.isEmpty)
    }

    @Test func argumentsThatDoNotMatchTheSchemaNeverReachTheProvider() throws {
        let s = try Setup()
        defer { s.dir.remove() }
        let cases: [(String, String)] = [
            ("{}", "argument 'text' is missing (it is required)"),
            (#"{"text": 5}"#, "argument 'text' must be a string, not an integer"),
            (#"{"text": "12345678901"}"#, "argument 'text' is 11 characters, more than the 10 it may have"),
            (#"{"text": "a", "count": 0}"#, "argument 'count' must be at least 1, not 0"),
            (#"{"text": "a", "count": 6}"#, "argument 'count' must be at most 5, not 6"),
            (#"{"text": "a", "count": 1.5}"#, "argument 'count' must be an integer, not a number"),
            (#"{"text": "a", "mode": "c"}"#, #"argument 'mode' must be one of "a", "b", not "c""#),
            (#"{"text": "a", "host": "x"}"#, "argument 'host' is not one this tool takes (it takes count, mode, text)"),
            ("[1]", "the arguments must be a JSON object, not an array"),
            ("{text", "the arguments are not JSON: {text"),
        ]
        for (arguments, problem) in cases {
            let r = try s.cli.run("tools", "call", "echo_args", arguments)
            #expect(r.status == 2 && r.stderr == "termhost tools call: tool 'echo_args': \(problem)\n", "\(arguments): \(r.output)")
        }
        let json = try s.cli.run("--json", "tools", "call", "echo_args", "{}")
        #expect(json.status == 2)
        #expect(json.stdout == "{\"tool\":\"echo_args\",\"ok\":false,\"code\":\"INVALID_ARGUMENT\",\"error\":\"tool 'echo_args': argument 'text' is missing (it is required)\"}\n")
        #expect(s.calls.isEmpty, "\(s.calls)")

        let ok = try s.cli.run("tools", "call", "echo_args", #"{"text": "hi", "count": 2, "mode": "b"}"#)
        #expect(ok.status == 0 && ok.stdout == "{\"arguments\":{\"count\":2,\"mode\":\"b\",\"text\":\"hi\"}}\n", "\(ok.output)")
        #expect(s.calls == [#"call echo_args {"count":2,"mode":"b","text":"hi"}"#])

        // A key said twice: the provider gets the one value the schema checked (the first), never
        // the text, where a parser keeping the last would find an integer.
        let twice = try s.cli.run("tools", "call", "echo_args", #"{"text": "hi", "text": 5}"#)
        #expect(twice.status == 0, "\(twice.output)")
        #expect(s.calls.last == #"call echo_args {"text":"hi"}"#)

        // A raw CSI (U+009B) and DEL are valid inside a JSON string; they reach the terminal
        // as \u escapes, the same JSON.
        let controls = try s.cli.run("tools", "call", "echo_args", "{\"text\": \"\u{9B}2J\u{7F}\"}")
        #expect(controls.stdout == #"{"arguments":{"text":"\u009b2J\u007f"}}"# + "\n", "\(controls.output)")
    }

    @Test func aResultOverTheLimitIsCutWithATruthfulNoteAndOneThatIsNotJSONIsRefused() throws {
        let s = try Setup()
        defer { s.dir.remove() }
        let big = try s.cli.run("tools", "call", "big_result")
        #expect(big.status == 0, "\(big.stderr)")
        let result = try JSONSerialization.jsonObject(with: Data(big.stdout.utf8)) as? [String: Any]
        #expect(result?["truncated"] as? Bool == true)
        #expect(result?["note"] as? String == "the result was 1048676 bytes, more than the 1048576 the host accepts; 100 more bytes were left out")
        #expect((result?["partial_result"] as? String)?.utf8.count == 1_048_576)
        let bad = try s.cli.run("tools", "call", "not_json")
        #expect(bad.status == 1 && bad.stderr == "termhost tools call: tool 'not_json' returned a result that is not JSON\n")
    }

    @Test func aCrashInAToolCallIsRecordedAndTheNextStartQuarantinesThePlugin() throws {
        let s = try Setup()
        defer { s.dir.remove() }
        let first = try s.cli.run("tools", "call", "crash_now")
        #expect(first.signaled && first.status == SIGSEGV, "\(first.output)")
        let second = try s.cli.run("tools", "call", "echo_args", #"{"text": "hi"}"#)
        #expect(second.status == 2, "\(second.output)")
        let library = s.cli.plugins + "/tools/libtools.so"
        #expect(second.stderr == """
        termhost: plugin 'org.test.tools' (\(library)) crashed the previous run with SIGSEGV in tool_call("crash_now"); quarantined until the library changes; 'termhost plugins quarantine clear org.test.tools' lifts it
        termhost tools call: no enabled feature offers tool 'echo_args'

        """)
        #expect(s.calls == ["call crash_now {}"])
    }

    @Test func ctrlCCancelsTheRunningToolCall() throws {
        let s = try Setup()
        defer { s.dir.remove() }
        let p = try Background(Paths.termhost, ["tools", "call", "wait_cancel"], environment: s.cli.environment)
        #expect(Wait.until(timeout: 120) { FileManager.default.fileExists(atPath: s.started) }, "the tool never started")
        kill(p.process.processIdentifier, SIGINT)
        #expect(Wait.until(timeout: 10) { !p.process.isRunning }, "the call was not cancelled")
        p.process.waitUntilExit()
        #expect(p.process.terminationStatus == 130, "\(p.errorOutput())")
    }
}

/// HostTools, the SDK's binding of termhost.tools/1, from a Swift plugin that consumes tools
/// (Tests/Fixtures/SwiftServicesPlugin), with hello-swift offering one.
@Suite struct HostToolsEndToEndTests {
    @Test func aSwiftPluginReadsTheCatalogAndCallsATool() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.swiftServices(in: cli.plugins)
        try Fixtures.helloSwift(in: cli.plugins)
        let r = try cli.run("swsvc", "tools")
        #expect(r.status == 0, "\(r.output)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(r.stdout)")
        let catalog = try JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [[String: Any]]
        #expect(catalog?.map { $0["name"] as? String } == ["hello_greet"])
        #expect(lines.dropFirst().first == "{\"greeting\":\"Hello, Swift!\"}")
        #expect(lines.last == "refused (1): tool 'hello_greet': argument 'name' must be a string, not an integer")
    }
}

/// The probe compares the manifest's tools with the library's, as it does commands.
@Suite struct ToolsManifestEndToEndTests {
    @Test func aManifestWhoseToolDiffersFromTheLibrarysIsNotLoadedAndSaysWhich() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try ToolsEndToEndTests.toolsPlugin(in: cli.plugins)
        let path = cli.plugins + "/tools/manifest.json"
        let edited = try String(contentsOfFile: path, encoding: .utf8)
            .replacingOccurrences(of: #""name": "echo_args", "description": "Returns its arguments.""#,
                                  with: #""name": "echo_args", "description": "Returns its arguments, politely.""#)
        try edited.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try cli.run("tools", "call", "echo_args", #"{"text": "hi"}"#)
        #expect(r.status == 2 && r.stderr == "termhost tools call: no enabled feature offers tool 'echo_args'\n", "\(r.output)")
        let doctor = try cli.run("doctor")
        #expect(doctor.stdout.contains(#"the manifest says declaration of tool 'echo_args' of feature org.test.tools 'read-only, parallel-safe, modes planning+acting, input_schema {"additionalProperties":false,"#), "\(doctor.stdout)")
        #expect(doctor.stdout.contains(#"description "Returns its arguments, politely."' but the library says 'read-only, parallel-safe"#), "\(doctor.stdout)")
    }
}

extension ToolsManifestEndToEndTests {
    @Test func toolsAreReadOnlyWhenTheDescriptorsStructSizeCoversThem() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        // An ABI 1.2 descriptor ends before `tools`; what lies there (here, a real list) is not its.
        try ToolsEndToEndTests.toolsPlugin(in: cli.plugins, defines: ["DESCRIPTOR_SIZE=offsetof(termhost_feature_descriptor_t,tools)"])
        let manifest = try String(contentsOfFile: cli.plugins + "/tools/manifest.json", encoding: .utf8)
        #expect(!manifest.contains("\"tools\""), "\(manifest)")
        let list = try cli.run("tools")
        #expect(list.status == 0 && list.stdout == "No tools: no enabled feature offers one (see 'termhost features').\n", "\(list.output)")
    }
}
