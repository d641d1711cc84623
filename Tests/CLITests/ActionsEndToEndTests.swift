import Foundation
import Testing
import TestSupport

/// Typed actions (action.h, ABI 1.3) through the real binary: Tests/Fixtures/actions-plugin.c
/// compiled with a version script exporting its functions, its manifest derived by the probe,
/// and every call made by `termhost call` through libffi. The fixture appends each action's
/// name to $ACTIONS_CALL_LOG when it runs, so a refused call can be shown not to have run.
@Suite struct ActionsEndToEndTests {
    /// Compiles actions-plugin.c into `<parent>/actions`; without `manifest` the probe derives
    /// one (`termhost plugins manifest`), whose result is returned.
    @discardableResult
    static func actionsPlugin(in parent: String, defines: [String] = [], manifest: String? = nil) throws -> Shell.Result? {
        let dir = parent + "/actions"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let map = parent + "/../actions-exports.map"
        _ = FileManager.default.createFile(atPath: map, contents: Data("{ global: termhost_plugin_entry; act_*; local: *; };\n".utf8))
        let lib = dir + "/libactions.so"
        let cc = try Shell.run("/usr/bin/cc", ["-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-pedantic",
                                               "-fPIC", "-shared", "-I", Paths.sdkInclude, "-Wl,--version-script=" + map, "-o", lib,
                                               Paths.root + "/Tests/Fixtures/actions-plugin.c"] + defines.map { "-D" + $0 })
        guard cc.status == 0 else { throw Shell.Failure(description: "cc failed: \(cc.output)") }
        if let manifest {
            _ = FileManager.default.createFile(atPath: dir + "/manifest.json", contents: Data(manifest.utf8))
            return nil
        }
        return try Shell.run(Paths.termhost, ["plugins", "manifest", lib, "--output", dir + "/manifest.json"])
    }

    struct Setup {
        let dir = TemporaryDirectory()
        var cli: CLI
        var log: String { dir.path + "/calls.log" }
        init() throws {
            cli = CLI(dir)
            cli.extraEnvironment = ["ACTIONS_CALL_LOG": dir.path + "/calls.log"]
            let derived = try ActionsEndToEndTests.actionsPlugin(in: cli.plugins)
            guard derived?.status == 0 else { throw Shell.Failure(description: "plugins manifest failed: \(derived?.output ?? "")") }
        }
        var calls: [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        /// `termhost call` with arguments as raw bytes (a word that is not UTF-8), through sh.
        func callRaw(_ shellWords: String) throws -> Shell.Result {
            try Shell.run("/bin/sh", ["-c", "exec \"$0\" call \(shellWords)", Paths.termhost], environment: cli.environment)
        }
    }

    /// What act_sum computes for the extremes, in C's order of additions.
    static var sumOfExtremes: String {
        var sum = Double(Int32.min)
        sum += Double(Int64.max)
        sum += Double(UInt32.max)
        sum += Double(UInt64.max)
        sum += 0.5
        sum += 1
        return "\(sum)"
    }

    @Test func everyTypeRoundTripsThroughWordsIncludingTheExtremes() throws {
        let s = try Setup()
        defer { s.dir.remove() }
        let cases: [(String, [String], String)] = [
            ("echo-bool", ["true"], "true"), ("echo-bool", ["false"], "false"),
            ("echo-i32", ["-2147483648"], "-2147483648"), ("echo-i32", ["2147483647"], "2147483647"), ("echo-i32", ["0"], "0"),
            ("echo-i64", ["-9223372036854775808"], "-9223372036854775808"), ("echo-i64", ["9223372036854775807"], "9223372036854775807"),
            ("echo-u32", ["0"], "0"), ("echo-u32", ["4294967295"], "4294967295"),
            ("echo-u64", ["0"], "0"), ("echo-u64", ["18446744073709551615"], "18446744073709551615"),
            ("echo-double", ["-0.5"], "-0.5"), ("echo-double", ["1e308"], "1e+308"),
            ("echo-string", [""], ""), ("echo-string", ["héllo wörld"], "héllo wörld"),
            ("echo-string", [String(repeating: "x", count: 100_000)], String(repeating: "x", count: 100_000)),
            ("echo-string", ["a\u{1B}[31mred"], "a\\033[31mred"),
            ("echo-bytes", ["AGEAYgA="], "\"AGEAYgA=\""), ("echo-bytes", [""], "\"\""),
            ("echo-json", [#"{"a": [1, 2.5e3, "\u0007"], "b": null}"#], #"{"a":[1,2.5e3,"\u0007"],"b":null}"#),
            ("sum", ["-2147483648", "9223372036854775807", "4294967295", "18446744073709551615", "0.5", "true"],
             ActionsEndToEndTests.sumOfExtremes),
        ]
        for (action, words, expected) in cases {
            let args = ["call", "org.test.actions/\(action)", "--"] + words
            let r = try Shell.run(Paths.termhost, args, environment: s.cli.environment)
            #expect(r.status == 0 && r.stdout == expected + "\n", "\(action) \(words.first?.prefix(40) ?? ""): \(r.output.prefix(300))")
        }
        #expect(s.calls.count == cases.count)
    }

    @Test func everyTypeRoundTripsThroughJSON() throws {
        let s = try Setup()
        defer { s.dir.remove() }
        let cases: [(String, String, String)] = [
            ("echo-bool", #"{"v": true}"#, "true"),
            ("echo-i32", #"{"v": -2147483648}"#, "-2147483648"), ("echo-i32", #"{"v": 2147483647}"#, "2147483647"),
            ("echo-i64", #"{"v": -9223372036854775808}"#, "-9223372036854775808"), ("echo-i64", #"{"v": 9223372036854775807}"#, "9223372036854775807"),
            ("echo-u32", #"{"v": 4294967295}"#, "4294967295"), ("echo-u64", #"{"v": 18446744073709551615}"#, "18446744073709551615"),
            ("echo-double", #"{"v": 0.25}"#, "0.25"),
            ("echo-string", #"{"s": ""}"#, #""""#), ("echo-string", #"{"s": "tab\there \u00e9 \ud83d\ude00"}"#, #""tab\there é 😀""#),
            ("echo-bytes", #"{"data": "AAEC/w=="}"#, #""AAEC/w==""#),
            ("echo-json", #"{"value": [true, {"k": "v"}]}"#, #"[true,{"k":"v"}]"#),
        ]
        for (action, arguments, expected) in cases {
            let r = try s.cli.run("call", "--json", "org.test.actions/\(action)", arguments)
            #expect(r.status == 0 && r.stdout == #"{"action":"org.test.actions/\#(action)","ok":true,"result":\#(expected)}"# + "\n",
                    "\(action) \(arguments): \(r.output)")
        }
        let none = try s.cli.run("call", "--json", "org.test.actions/main-only")
        #expect(none.stdout == #"{"action":"org.test.actions/main-only","ok":true,"result":1}"# + "\n", "\(none.output)")
    }

    @Test func badArgumentsAreRefusedNamingTheParameterAndTheFunctionIsNeverCalled() throws {
        let s = try Setup()
        defer { s.dir.remove() }
        let cases: [([String], String)] = [
            (["echo-i32", "3000000000"], "org.test.actions/echo-i32: parameter 'v' (int32): 3000000000 is out of range (-2147483648 to 2147483647)"),
            (["echo-i32", "--", "-2147483649"], "org.test.actions/echo-i32: parameter 'v' (int32): -2147483649 is out of range (-2147483648 to 2147483647)"),
            (["echo-u32", "--", "-1"], "org.test.actions/echo-u32: parameter 'v' (uint32): -1 is out of range (0 to 4294967295)"),
            (["echo-u64", "18446744073709551616"], "org.test.actions/echo-u64: parameter 'v' (uint64): 18446744073709551616 is out of range (0 to 18446744073709551615)"),
            (["echo-i64", "9223372036854775808"], "org.test.actions/echo-i64: parameter 'v' (int64): 9223372036854775808 is out of range (-9223372036854775808 to 9223372036854775807)"),
            (["echo-i32", "12abc"], "org.test.actions/echo-i32: parameter 'v' (int32): expected an integer, not '12abc'"),
            (["echo-bool", "yes"], "org.test.actions/echo-bool: parameter 'v' (bool): expected true or false, not 'yes'"),
            (["echo-double", "nan"], "org.test.actions/echo-double: parameter 'v' (double): expected a finite number, not 'nan'"),
            (["echo-bytes", "not base64!"], "org.test.actions/echo-bytes: parameter 'data' (bytes): expected base64, not 'not base64!'"),
            (["echo-json", "{\"a\":"], "org.test.actions/echo-json: parameter 'value' (json): not JSON: unexpected end at byte 5"),
            (["echo-i32"], "org.test.actions/echo-i32: action 'echo-i32' takes 1 argument (v), not 0"),
            (["echo-i32", "1", "2"], "org.test.actions/echo-i32: action 'echo-i32' takes 1 argument (v), not 2"),
            (["--json", "echo-i32", #"{"v": 1.5}"#], "org.test.actions/echo-i32: parameter 'v' (int32): expected an integer, not '1.5'"),
            (["--json", "echo-i32", #"{"v": "1"}"#], #"org.test.actions/echo-i32: parameter 'v' (int32): expected an integer, not "1""#),
            (["--json", "echo-i32", #"{}"#], "org.test.actions/echo-i32: parameter 'v' (int32) is missing"),
            (["--json", "echo-i32", #"{"v": 1, "w": 2}"#], "org.test.actions/echo-i32: action 'echo-i32' has no parameter 'w'"),
            (["--json", "echo-i32", #"{"v": 1, "v": 2}"#], "org.test.actions/echo-i32: parameter 'v' is given twice"),
            (["--json", "echo-i32", "[1]"], "org.test.actions/echo-i32: the arguments must be a JSON object"),
            (["--json", "echo-i32", "{v: 1}"], "org.test.actions/echo-i32: the arguments are not JSON: expected a key at byte 1"),
            (["--json", "echo-string", #"{"s": "a\u0000b"}"#], "org.test.actions/echo-string: parameter 's' (string): a string may not contain NUL (use bytes)"),
            (["--json", "echo-string", #"{"s": "\ud800"}"#], "org.test.actions/echo-string: the arguments are not JSON: an unpaired surrogate in a \\u escape at byte 13"),
        ]
        for (words, message) in cases {
            var args = ["call"] + words
            let at = args.firstIndex { !$0.hasPrefix("-") && $0 != "call" }!
            args[at] = "org.test.actions/" + args[at]
            let r = try Shell.run(Paths.termhost, args, environment: s.cli.environment)
            let expected = args.contains("--json")
                ? "{\"action\":\"\(args[at])\",\"ok\":false,\"code\":\"INVALID_ARGUMENT\",\"error\":\(jsonQuoted(message))}\n"
                : "termhost call: \(message)\n"
            #expect(r.status == 2 && (args.contains("--json") ? r.stdout : r.stderr) == expected, "\(words): \(r.output)")
        }
        let notUTF8 = try s.callRaw("org.test.actions/echo-string \"$(printf 'a\\377b')\"")
        #expect(notUTF8.status == 2 && notUTF8.stderr == "termhost call: org.test.actions/echo-string: parameter 's' (string): it is not UTF-8\n", "\(notUTF8.output)")
        #expect(s.calls.isEmpty, "called: \(s.calls)")
        let unknown = try s.cli.run("call", "org.test.actions/echo-i33", "1")
        #expect(unknown.status == 2 && unknown.stderr == "termhost call: no enabled feature declares action 'org.test.actions/echo-i33' (see 'termhost actions'). Did you mean 'org.test.actions/echo-i32'?\n", "\(unknown.output)")
    }

    func jsonQuoted(_ s: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [s], options: [.withoutEscapingSlashes]), as: UTF8.self).dropFirst().dropLast().description
    }

    @Test func anErrorReturnFailsWithTheActionsMessage() throws {
        let s = try Setup()
        defer { s.dir.remove() }
        let r = try s.cli.run("call", "org.test.actions/fail", "disk \u{1B}[2J full")
        #expect(r.status == 1 && r.stderr == "termhost call: org.test.actions/fail: disk \\033[2J full\n" && r.stdout.isEmpty, "\(r.output)")
        let j = try s.cli.run("call", "--json", "org.test.actions/fail", #"{"message": "no"}"#)
        #expect(j.status == 1 && j.stdout == #"{"action":"org.test.actions/fail","ok":false,"code":"IO","error":"org.test.actions/fail: no"}"# + "\n", "\(j.output)")
        #expect(s.calls == ["fail", "fail"])
    }

    @Test func actionsListsTheDeclarationsFromTheManifest() throws {
        let s = try Setup()
        defer { s.dir.remove() }
        let r = try s.cli.run("actions")
        #expect(r.status == 0 && r.stdout.contains("org.test.actions/sum          read-only       any     (a: int32, b: int64, c: uint32, d: uint64, e: double, f: bool) -> double  adds one of each numeric type\n"), "\(r.output)")
        let json = try JSONSerialization.jsonObject(with: Data(try s.cli.run("actions", "--json").stdout.utf8)) as! [[String: Any]]
        #expect(json.count == 13)
        let fail = json.first { $0["action"] as? String == "org.test.actions/fail" }
        #expect(fail?["symbol"] as? String == "act_fail" && fail?["takes_error"] as? Bool == true && fail?["read_only"] as? Bool == false)
        #expect(s.calls.isEmpty)
    }

    @Test func aMissingOrUnexportedSymbolIsRefusedAtTheProbeNamingTheAction() throws {
        for (define, action, symbol) in [("MISSING", "missing", "act_missing"), ("UNEXPORTED", "hidden", "act_hidden")] {
            let dir = TemporaryDirectory()
            defer { dir.remove() }
            let cli = CLI(dir)
            let derived = try Self.actionsPlugin(in: cli.plugins, defines: [define])
            let problem = "probe failed: plugin 'org.test.actions': feature 'org.test.actions': action '\(action)': symbol '\(symbol)' is not in the library's export list (add it to the version script's global: list)"
            #expect(derived?.status != 0 && derived?.output.contains(problem) == true, "\(derived?.output ?? "")")
        }
    }

    @Test func aHandWrittenManifestNamingAnUnexportedSymbolKeepsThePluginOut() throws {
        let s = try Setup()
        defer { s.dir.remove() }
        let path = s.cli.plugins + "/actions/manifest.json"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let forged = text.replacingOccurrences(of: "\"symbol\": \"act_i32\"", with: "\"symbol\": \"called\"")
        try forged.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try s.cli.run("call", "org.test.actions/echo-i32", "1")
        #expect(r.status != 0 && s.calls.isEmpty, "\(r.output)")
        let doctor = try s.cli.run("doctor")
        #expect(doctor.stdout.contains("declaration of action 'echo-i32' of feature org.test.actions"), "\(doctor.output)")
    }

    @Test func anActionThatCrashesIsQuarantinedOnTheNextStartAndOtherPluginsKeepWorking() throws {
        let s = try Setup()
        defer { s.dir.remove() }
        let hello = try Fixtures.helloC(in: s.cli.plugins)
        _ = hello
        let first = try s.cli.run("call", "org.test.actions/crash")
        #expect(first.signaled && first.status == SIGSEGV, "\(first.output)")
        let second = try s.cli.run("hello", "you")
        #expect(!second.signaled && second.status == 0, "\(second.output)")
        #expect(second.stderr.contains("plugin 'org.test.actions' (\(s.cli.plugins)/actions/libactions.so) crashed the previous run with SIGSEGV in action_call(\"org.test.actions/crash\"); quarantined"), "\(second.output)")
        let third = try s.cli.run("call", "org.test.actions/echo-i32", "1")
        #expect(third.status != 0, "\(third.output)")
        #expect(s.calls == ["crash"])
    }

    @Test func theCExampleBuildsWithItsMakefileAndItsActionsRun() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        _ = try Fixtures.makeExample("actions-c", in: cli.plugins)
        let file = dir.write("hello.txt", "hello\n")
        let e = "org.termhost.examples.actions-c"
        // CRC-32 of "hello\n", as gzip's trailer holds it.
        let crc = try cli.run("call", "\(e)/crc32", file)
        #expect(crc.status == 0 && crc.stdout == "909783072\n", "\(crc.output)")
        let missing = try cli.run("call", "\(e)/crc32", dir.path + "/nothing")
        #expect(missing.status == 1 && missing.stderr == "termhost call: \(e)/crc32: \(dir.path)/nothing: No such file or directory\n", "\(missing.output)")
        let resolve = try cli.run("call", "--json", "\(e)/resolve", #"{"name": "localhost"}"#)
        #expect(resolve.status == 0 && resolve.stdout.contains("127.0.0.1"), "\(resolve.output)")
        let overflow = try cli.run("call", "\(e)/add-i32", "2147483647", "1")
        #expect(overflow.status == 1 && overflow.stderr == "termhost call: \(e)/add-i32: add-i32: overflow\n", "\(overflow.output)")
        #expect(try cli.run("call", "\(e)/add-u64", "18446744073709551614", "1").stdout == "18446744073709551615\n")
        #expect(try cli.run("call", "\(e)/reverse", "AGEAYg==").stdout == "\"YgBhAA==\"\n")
        #expect(try cli.run("call", "\(e)/not", "false").stdout == "true\n")
    }

    @Test func theSwiftExamplesCdeclActionRuns() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        _ = try Fixtures.bundle("libActionsSwiftPlugin.so", as: "org.termhost.examples.actions-swift", in: cli.plugins)
        let e = "org.termhost.examples.actions-swift/fahrenheit"
        let r = try cli.run("call", e, "21.5")
        #expect(r.status == 0 && r.stdout == "70.7\n", "\(r.output)")
        let cold = try cli.run("call", "--json", e, #"{"celsius": -300}"#)
        #expect(cold.status == 1 && cold.stdout == #"{"action":"\#(e)","ok":false,"code":"INVALID_ARGUMENT","error":"\#(e): -300.0 °C is below absolute zero"}"# + "\n", "\(cold.output)")
        #expect(try cli.run("plugins", "check", cli.plugins + "/org.termhost.examples.actions-swift").status == 0)
    }

    @Test func everyActionIsAToolWithASchemaFromItsDeclaration() throws {
        let s = try Setup()
        defer { s.dir.remove() }
        let catalog = try JSONSerialization.jsonObject(with: Data(try s.cli.run("tools", "--json").stdout.utf8)) as! [[String: Any]]
        let sum = catalog.first { $0["name"] as? String == "actions_sum" }
        #expect(sum?["read_only"] as? Bool == true && sum?["feature"] as? String == "org.test.actions")
        let schema = sum?["input_schema"] as? [String: Any]
        let a = (schema?["properties"] as? [String: Any])?["a"] as? [String: Any]
        #expect(a?["type"] as? String == "integer" && a?["maximum"] as? Int == 2147483647 && a?["minimum"] as? Int == -2147483648)
        #expect(schema?["required"] as? [String] == ["a", "b", "c", "d", "e", "f"] && schema?["additionalProperties"] as? Bool == false)
        #expect(catalog.first { $0["name"] as? String == "actions_crash" }?["read_only"] as? Bool == false)
        // The table lists the same tools as --json, actions included.
        let table = try s.cli.run("tools").stdout.split(separator: "\n").map { $0.split(separator: " ").first.map(String.init) ?? "" }
        #expect(Set(catalog.compactMap { $0["name"] as? String }).isSubset(of: Set(table)), "\(table)")
        #expect(table.contains("actions_sum"), "\(table)")
        let r = try s.cli.run("tools", "call", "actions_echo_u64", #"{"v": 18446744073709551615}"#)
        #expect(r.status == 0 && r.stdout == "18446744073709551615\n", "\(r.output)")
        let refused = try s.cli.run("tools", "call", "actions_echo_i32", #"{"v": 3000000000}"#)
        #expect(refused.status == 2 && refused.stderr == "termhost tools call: org.test.actions/echo-i32: parameter 'v' (int32): 3000000000 is out of range (-2147483648 to 2147483647)\n", "\(refused.output)")
        #expect(s.calls == ["u64"])
    }
}
