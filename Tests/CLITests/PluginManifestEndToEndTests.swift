import Foundation
import Testing
import TestSupport

/// `termhost plugins manifest`: a plugin's manifest is derived from its code, which declares
/// each feature once (SDK/Examples/hello-c/hello.c, hello-swift/Sources/HelloSwift.swift).
@Suite struct PluginManifestEndToEndTests {
    @Test func theCExamplesManifestIsWhatHelloCDeclares() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        // The Makefile's rule runs the same command, so this bundle's manifest is already derived.
        let c = try Fixtures.helloC(in: cli.plugins)
        let r = try cli.run("plugins", "manifest", c.library)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == """
        {
          "id": "org.termhost.examples.hello-c",
          "version": "1.0.0",
          "abi": "\(Fixtures.abi)",
          "library": "libhello-c.so",
          "features": [
            {
              "id": "org.termhost.examples.hello-c",
              "version": "1.0.0",
              "displayName": "Hello (C)",
              "summary": "An example feature written in C.",
              "order": 1000,
              "scope": "process",
              "requiresServices": ["termhost.store/1"],
              "commands": [
                { "name": "hello", "summary": "Greet someone and count the greetings", "usage": "usage: termhost hello [NAME]\\nPrints a greeting and how many times this command has run on this machine.\\nSetting org.termhost.examples.hello-c/name changes the default NAME." }
              ],
              "tools": [
                { "name": "local_time", "description": "The local date, time and time zone of the machine termhost runs on (not of a remote host).", "inputSchema": {"additionalProperties":false,"properties":{},"type":"object"}, "readOnly": true, "parallelSafe": true, "modes": ["planning", "acting"] }
              ]
            }
          ]
        }

        """)
        #expect(try String(contentsOfFile: c.manifest, encoding: .utf8) == r.stdout)
        let check = try cli.run("plugins", "check", c.directory)
        #expect(check.status == 0 && check.stdout.hasSuffix(": OK\n"), "\(check.output)")
    }

    @Test func theSwiftExamplesManifestIsWhatHelloSwiftDeclares() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        let bundle = cli.plugins + "/hello-swift"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.products + "/libHelloSwiftPlugin.so", toPath: bundle + "/libHelloSwiftPlugin.so")
        let r = try cli.run("plugins", "manifest", bundle + "/libHelloSwiftPlugin.so", "--output", bundle + "/manifest.json")
        #expect(r.status == 0 && r.output.isEmpty, "\(r.output)")
        let m = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: bundle + "/manifest.json"))) as! [String: Any]
        #expect(m["id"] as? String == "org.termhost.examples.hello-swift")
        #expect(m["version"] as? String == "1.0.0")
        #expect(m["abi"] as? String == "1.0")   // Plugin(abiMinorNeeded: 0)
        #expect(m["library"] as? String == "libHelloSwiftPlugin.so")
        let features = m["features"] as! [[String: Any]]
        #expect(features.count == 1)
        #expect(features[0]["id"] as? String == "org.termhost.examples.hello-swift")
        #expect(features[0]["displayName"] as? String == "Hello (Swift)")
        #expect(features[0]["summary"] as? String == "An example feature written in Swift.")
        #expect(features[0]["order"] as? Int == 1000)
        #expect(features[0]["requiresServices"] as? [String] == ["termhost.store/1"])
        let commands = features[0]["commands"] as! [[String: String]]
        #expect(commands == [["name": "hello-swift", "summary": "Greet someone from Swift and count the greetings",
                              "usage": "usage: termhost hello-swift [NAME]"]])
        let check = try cli.run("plugins", "check", bundle)
        #expect(check.status == 0 && check.stdout.hasSuffix(": OK\n"), "\(check.output)")
    }

    @Test func aLibraryThatFailsTheProbeGetsItsProblemsAndNoManifest() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        let p = try Fixtures.cPlugin(in: cli.plugins, dirName: "broken", id: "org.test.broken", defines: ["CRASH_IN_INIT", "EXTRA_EXPORT"])
        let output = dir.path + "/out/manifest.json"
        try FileManager.default.createDirectory(atPath: dir.path + "/out", withIntermediateDirectories: true)
        let r = try cli.run("plugins", "manifest", p.library, "--output", output)
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("problem: \(p.library) exports 1 symbol(s) besides termhost_plugin_entry (e.g. fixture_helper); link with a version script"))
        #expect(r.stderr.contains("problem: probe crashed with SIGSEGV in init()"))
        #expect(r.stderr.hasSuffix("\(p.library): 2 problem(s); no manifest written\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path + "/out").isEmpty)
    }

    @Test func aStaleManifestIsStillRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        let c = try Fixtures.helloC(in: cli.plugins)
        let text = try String(contentsOfFile: c.manifest, encoding: .utf8)
        try text.replacingOccurrences(of: "\"order\": 1000", with: "\"order\": 10").write(toFile: c.manifest, atomically: true, encoding: .utf8)
        let check = try cli.run("plugins", "check", c.directory)
        #expect(check.status == 1)
        #expect(check.stdout.contains("problem: "), "\(check.output)")
        #expect(check.stdout.contains("order of feature org.termhost.examples.hello-c"), "\(check.output)")
    }

    @Test func wrongArgumentsPrintTheUsage() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        let none = try cli.run("plugins", "manifest")
        #expect(none.status == 2 && none.stderr == "usage: termhost plugins manifest <library.so> [--output FILE]\n")
        let typo = try cli.run("plugins", "manifest", "x.so", "--outptu", "y")
        #expect(typo.status == 2)
        #expect(typo.stderr.hasPrefix("termhost plugins manifest: unknown option '--outptu'. Did you mean '--output'?\n"))
    }
}
