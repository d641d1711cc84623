import Foundation
import Testing
import TestSupport

@Suite struct PluginCheckEndToEndTests {
    @Test func checkPassesTheCExampleAndTheSwiftExample() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        let c = try Fixtures.helloC(in: cli.plugins)
        let swift = try Fixtures.helloSwift(in: cli.plugins)
        for p in [c, swift] {
            let r = try cli.run("plugins", "check", p.directory)
            #expect(r.status == 0, "\(r.output)")
            #expect(r.stdout.hasSuffix(": OK\n"))
        }
    }

    @Test func checkPrintsEveryProblemOfABrokenBundle() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        let p = try Fixtures.cPlugin(in: cli.plugins, dirName: "leaky", id: "org.test.leaky", defines: ["CRASH_IN_INIT", "EXTRA_EXPORT"])
        let r = try cli.run("plugins", "check", p.directory)
        #expect(r.status == 1)
        // Built without a version script, so its helper leaks into the global namespace.
        #expect(r.stdout.contains("problem: \(p.library) exports 1 symbol(s) besides termhost_plugin_entry (e.g. fixture_helper); link with a version script"))
        #expect(r.stdout.contains("problem: probe crashed with SIGSEGV in init()"))
        #expect(r.stdout.hasSuffix("problem(s)\n"))
        let json = try JSONSerialization.jsonObject(with: Data(try cli.run("--json", "plugins", "check", p.directory).stdout.utf8)) as! [String: Any]
        #expect(json["ok"] as? Bool == false)
    }

    @Test func checkReportsAMalformedManifestWithItsPosition() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        let manifest = dir.write("plugins/m/manifest.json", "{ \"id\": \"org.test.m\", }x")
        let r = try cli.run("plugins", "check", dir.path + "/plugins/m")
        #expect(r.status == 1)
        #expect(r.stdout.contains("problem: \(manifest):1:"))
    }
}
