import Foundation
import Testing
import TestSupport

/// Issue 13 §2 through the real `termhost` binary: every value a plugin hands the host is
/// checked (struct sizes, service arguments), pinned plugins keep their command names, a
/// plugin command's arguments arrive as typed, and a plugin may declare the minimum ABI it needs.
@Suite(.serialized) struct BoundaryEndToEndTests {
    /// A scratch CLI with the boundary fixture and an ordinary plugin (`termhost fixture`) beside it.
    func setUp(_ dir: TemporaryDirectory, defines: [String] = []) throws -> CLI {
        let cli = CLI(dir)
        try BoundaryFixture.build(in: cli.plugins, defines: defines)
        try Fixtures.cPlugin(in: cli.plugins, dirName: "other", id: "org.test.other")
        return cli
    }

    /// The other plugin still loads and runs.
    func expectOthersWork(_ cli: CLI) throws {
        let other = try cli.run("fixture")
        #expect(other.status == 0 && other.stdout.hasPrefix("fixture ran with 0 argument(s)"), "\(other.output)")
    }

    @Test(arguments: [
        ("ENTRY_SIZE=16", "termhost_plugin_entry_t is 16 bytes, too small for 'plugin_id' (ABI 1.0 needs 56)"),
        ("FACTORY_SIZE=12", "termhost_feature_factory_t is 12 bytes, too small for 'count' (ABI 1.0 needs 32)"),
        ("DESCRIPTOR_SIZE=48", "descriptor 0: termhost_feature_descriptor_t is 48 bytes, too small for 'after' (ABI 1.0 needs 96)"),
        ("COMMAND_SIZE=16", "command 0: termhost_command_descriptor_t is 16 bytes, too small for 'summary' (ABI 1.0 needs 32)"),
    ])
    func aStructTooSmallForABI10IsRefusedAtTheProbe(define: String, message: String) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = try setUp(dir, defines: [define])
        let r = try cli.run("bnd", "ok")
        #expect(r.status == 1, "\(r.output)")
        #expect(r.stderr.contains("termhost: command 'bnd' is unavailable: plugin 'org.test.boundary'"), "\(r.output)")
        #expect(r.stderr.contains(message), "\(r.output)")
        let check = try cli.run("plugins", "check", cli.plugins + "/boundary")
        #expect(check.status != 0 && check.output.contains(message), "\(check.output)")
        try expectOthersWork(cli)
    }

    @Test func aFeatureInstanceTooSmallForABI10IsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = try setUp(dir, defines: ["FEATURE_SIZE=40"])
        let r = try cli.run("bnd", "ok")
        #expect(r.status != 0 && !r.stdout.contains("ok json"), "\(r.output)")
        #expect(r.stderr.contains("plugin 'org.test.boundary': termhost_feature_t is 40 bytes, too small for 'background' (ABI 1.0 needs 96)"),
                "\(r.output)")
        try expectOthersWork(cli)
    }

    @Test(arguments: [
        (["store-keys"], "error 1: put: key is not valid UTF-8 (byte 0xff at offset 1); refused rather than rewritten, so that two different keys never become one"),
        (["store-collection"], "error 1: get: collection is not valid UTF-8 (byte 0xc3 at offset 1)"),
        (["store-null-value"], "error 1: put: value is NULL but its size is 5 bytes"),
        (["secret-id"], "error 1: get: id is not valid UTF-8 (byte 0xff at offset 2)"),
        (["secret-null-value"], "error 1: put: value is NULL but its size is 16 bytes"),
        (["publish-not-json"], "error 1: publish: payload is not JSON: '{not json'"),
        (["publish-topic", "Org Test"], "error 1: publish: topic 'Org Test' contains 'O'; a topic is lowercase letters, digits, '.', '_' and '-'"),
        (["publish-topic", ""], "error 1: publish: topic is empty"),
        (["publish-topic", "termhost.tools.cli-call"], "error 4: publish: topic 'termhost.tools.cli-call' is the host's (topics beginning with 'termhost.' are published by the host only)"),
        (["publish-topic", "org.test.other.news"], "error 4: publish: topic 'org.test.other.news' belongs to plugin 'org.test.other' (a topic under a plugin's ID is published by that plugin only)"),
        (["publish-long-topic"], "error 1: publish: topic is 201 bytes, more than the 200 a topic may have"),
        (["subscribe-topic"], "error 1: subscribe: topic 'Org.Test' contains 'O'"),
        (["setting-null-key"], "error 1: get_setting: key is NULL"),
        (["run-null-arg"], "error 1: run: argv[2] is NULL"),
    ])
    func anInvalidServiceArgumentIsRefusedWithItsName(arguments: [String], message: String) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = try setUp(dir)
        let r = try Shell.run(Paths.termhost, ["bnd"] + arguments, environment: cli.environment)
        #expect(r.status == 1, "\(r.output)")
        #expect(r.stderr.contains(message), "\(r.output)")
        #expect(!r.stdout.contains("value "), "nothing was stored under a rewritten key: \(r.output)")
        let again = try cli.run("bnd", "ok")
        #expect(again.status == 0, "\(again.output)")
        try expectOthersWork(cli)
    }

    @Test func argumentsAfterTheCommandNameArriveAsTyped() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = try setUp(dir)
        let r = try cli.run("bnd", "ok", "remember", "the", "--json", "flag", "--", "--help", "-h", "--log-level")
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout == "ok json=0 args=8 [remember] [the] [--json] [flag] [--] [--help] [-h] [--log-level]\n", "\(r.output)")
        let json = try cli.run("--json", "bnd", "ok", "x")
        #expect(json.stdout == "ok json=1 args=1 [x]\n", "\(json.output)")
        // The host's own commands still take host options after their name.
        #expect(try cli.run("features", "--json").stdout.hasPrefix("["))
        let usage = try cli.run("--help", "fixture")
        #expect(usage.status == 0 && usage.stdout.contains("fixture command"), "\(usage.output)")
    }

    @Test func aPluginOutsideThePinnedSetCannotTakeAPinnedCommand() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        let system = dir.sub("system") + "/termhost/plugins"
        let pinned = try Fixtures.helloC(in: system)
        let hash = try Shell.run("/usr/bin/sha256sum", [pinned.library]).stdout.prefix(64)
        _ = dir.write("system/termhost/plugins/plugin-set.json", """
        { "name": "test", "version": "1", "plugins": [ { "id": "org.termhost.examples.hello-c", "version": "1.0.0", "sha256": "\(hash)" } ] }
        """)
        // Starts earlier (order -100) and would have taken `hello` with only a warning.
        try Fixtures.cPlugin(in: cli.plugins, dirName: "hijack", id: "org.test.hijack",
                             defines: ["COMMAND_NAME=\"hello\"", "FEATURE_ORDER=-100"])
        let r = try cli.run("hello", "Ann")
        #expect(r.status == 0 && !r.stdout.contains("hello ran with"), "\(r.output)")
        #expect(r.stdout.contains("Ann"), "\(r.output)")
        let features = try cli.run("features")
        #expect(features.output.contains("feature 'org.test.hijack' of plugin 'org.test.hijack' (\(cli.plugins)/hijack), which no plugin set pins, contributes command 'hello', which pinned feature 'org.termhost.examples.hello-c' declares; refused, 'org.termhost.examples.hello-c' keeps it"),
                "\(features.output)")
    }

    /// Headers one minor newer than the host's, as a plugin author with a newer SDK has them.
    func newerHeaders(_ dir: TemporaryDirectory) throws -> String {
        let include = dir.sub("newer-include")
        _ = try Shell.run("/bin/cp", ["-R", Paths.sdkInclude + "/.", include])
        let version = include + "/termhost/version.h"
        let text = try String(contentsOfFile: version, encoding: .utf8)
        let host = BoundaryFixture.hostMinor
        try text.replacingOccurrences(of: "#define TERMHOST_ABI_MINOR \(host)\n", with: "#define TERMHOST_ABI_MINOR \(host + 1)\n")
            .write(toFile: version, atomically: true, encoding: .utf8)
        return include
    }

    @Test func aPluginBuiltWithNewerHeadersLoadsWhenItDeclaresTheMinorItNeeds() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        let include = try newerHeaders(dir)
        let host = BoundaryFixture.hostMinor
        try BoundaryFixture.build(in: cli.plugins, defines: ["TERMHOST_ABI_MINOR_NEEDED=0"], abi: "1.0", include: include)
        try BoundaryFixture.build(in: cli.plugins, dirName: "newer", id: "org.test.newer", command: "newer",
                                  abi: "1.\(host + 1)", include: include)
        let old = try cli.run("bnd", "ok")
        #expect(old.status == 0 && old.stdout.hasPrefix("ok json=0"), "\(old.output)")
        let newer = try cli.run("newer", "ok")
        #expect(newer.status == 1, "\(newer.output)")
        #expect(newer.stderr.contains("built for Termhost ABI 1.\(host + 1) but this host implements ABI 1.\(host)"), "\(newer.output)")
    }

    @Test func aTooLongNameIsRefusedForItsLengthNotItsCharacters() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var cli = try setUp(dir)
        let longID = "org." + String(repeating: "a", count: 197)
        try Fixtures.cPlugin(in: cli.plugins, dirName: "longid", id: longID)
        let check = try cli.run("plugins", "check", cli.plugins + "/longid")
        #expect(check.status == 1, "\(check.output)")
        #expect(check.output.contains("invalid feature ID '\(longID.prefix(40))…': 201 bytes, more than the 200 a feature ID may have"),
                "\(check.output)")
        try FileManager.default.removeItem(atPath: cli.plugins + "/longid")
        let longCommand = String(repeating: "c", count: 65)
        try Fixtures.cPlugin(in: cli.plugins, dirName: "longcmd", id: "org.test.longcmd", defines: ["COMMAND_NAME=\"\(longCommand)\""])
        cli.extraEnvironment = [:]
        let features = try cli.run("features")
        #expect(features.output.contains("feature 'org.test.longcmd' contributes command '\(longCommand.prefix(40))…', whose name is 65 bytes, more than the 64 a command name may have; it was dropped"),
                "\(features.output)")
        try expectOthersWork(cli)
    }
}
