import Foundation
import Testing
import TermhostLoader
import TermhostRegistry
import TermhostRuntime
import TestSupport

/// Registry problems found among real, loaded plugins: each names its culprits, and the host
/// carries on with everything else.
@Suite struct RuntimeResolutionTests {
    @Test func onlyPluginsOfTheSameIDCanDeclareTheSameFeatureAndTheFirstFoundKeepsIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        // Namespaces nest, so two plugins can still both declare one ID: org.test.a owns
        // org.test.a.shared unless a plugin of that very ID is installed (then it is refused).
        let a = try Fixtures.cPlugin(in: plugins, dirName: "a", id: "org.test.a", defines: ["FEATURE_ID=\"org.test.a.shared\"", "COMMAND_NAME=\"a\""])
        let b = try Fixtures.cPlugin(in: plugins, dirName: "b", id: "org.test.a", defines: ["FEATURE_ID=\"org.test.a.shared\"", "COMMAND_NAME=\"b\""])
        let runtime = try HostRuntime.start(options(dir, pluginDir: plugins))
        defer { runtime.shutdown() }
        #expect(runtime.records.first { $0.directory == b.directory }?.failure == .shadowed(by: a.directory))
        #expect(runtime.resolution.commandOwners["a"] != nil && runtime.resolution.commandOwners["b"] == nil)
    }

    @Test func dependencyCycleAcrossPluginsNamesItsMembers() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        try Fixtures.cPlugin(in: plugins, dirName: "x", id: "org.test.x", defines: ["FEATURE_AFTER=\"org.test.y\"", "COMMAND_NAME=\"x\""],
                             extraFeatureJSON: #", "after": ["org.test.y"]"#)
        try Fixtures.cPlugin(in: plugins, dirName: "y", id: "org.test.y", defines: ["FEATURE_AFTER=\"org.test.x\"", "COMMAND_NAME=\"y\""],
                             extraFeatureJSON: #", "after": ["org.test.x"]"#)
        try Fixtures.cPlugin(in: plugins, dirName: "z", id: "org.test.z", defines: ["COMMAND_NAME=\"z\""])
        let runtime = try HostRuntime.start(options(dir, pluginDir: plugins))
        defer { runtime.shutdown() }
        let cycle = RegistryError.cycle([FeatureID(checked: "org.test.x"), FeatureID(checked: "org.test.y")])
        #expect(runtime.resolution.feature(FeatureID(checked: "org.test.x"))?.state == .unavailable(cycle))
        #expect(runtime.resolution.feature(FeatureID(checked: "org.test.y"))?.state == .unavailable(cycle))
        #expect(runtime.resolution.enabled.map(\.descriptor.id.rawValue) == ["org.test.z"])
    }

    @Test func requiredServiceThatNobodyProvidesMakesTheFeatureUnavailable() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.needy", defines: ["REQUIRES_SERVICE=\"org.termhost.ssh.transport/1\""],
                             extraFeatureJSON: #", "requiresServices": ["org.termhost.ssh.transport/1"]"#)
        let runtime = try HostRuntime.start(options(dir, pluginDir: dir.path + "/plugins"))
        defer { runtime.shutdown() }
        #expect(runtime.resolution.feature(FeatureID(checked: "org.test.needy"))?.state.reason
                == "feature 'org.test.needy' requires service 'org.termhost.ssh.transport/1', which no enabled feature provides")
        #expect(runtime.resolution.commandOwners.isEmpty)
    }

    @Test func corruptStoreIsReportedAndOnlyFeaturesThatNeedItAreUnavailable() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        try Fixtures.helloC(in: plugins)
        try Fixtures.cPlugin(in: plugins, dirName: "free", id: "org.test.free")
        let db = dir.sub("data") + "/termhost.db"
        let garbage = Data(repeating: 0x5A, count: 4096)
        _ = FileManager.default.createFile(atPath: db, contents: garbage)
        let runtime = try HostRuntime.start(options(dir, pluginDir: plugins))
        defer { runtime.shutdown() }
        let reason = try #require(runtime.resolution.feature(FeatureID(checked: "org.termhost.examples.hello-c"))?.state.reason)
        #expect(reason.hasPrefix("feature 'org.termhost.examples.hello-c' requires service 'termhost.store/1', which is unavailable: cannot open the store \(db)") ||
                reason.hasPrefix("feature 'org.termhost.examples.hello-c' requires service 'termhost.store/1', which is unavailable: store \(db)"))
        #expect(reason.contains("file is not a database"))
        #expect(runtime.resolution.commandOwners["fixture"]?.rawValue == "org.test.free")
        #expect(FileManager.default.contents(atPath: db) == garbage, "the store must not be recreated or touched")
    }

    @Test func storeServiceWorksThroughTheCABIAndIsNamespacedPerPlugin() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        try Fixtures.helloC(in: plugins)
        try Fixtures.helloSwift(in: plugins)
        let runtime = try HostRuntime.start(options(dir, pluginDir: plugins))
        let scene = runtime.lifecycle.attachScene(hasTerminal: false)
        // Output goes to this process's stdout; the counters land in the store.
        #expect(runtime.runCommand(scene: scene, argv: ["hello", "tester"], json: false) == 0)
        #expect(runtime.runCommand(scene: scene, argv: ["hello"], json: false) == 0)
        #expect(runtime.runCommand(scene: scene, argv: ["hello-swift"], json: true) == 0)
        #expect(runtime.runCommand(scene: scene, argv: ["hello", "a", "b"], json: false) == 2)
        let store = try #require(runtime.services.store)
        #expect(try store.get(namespace: "org.termhost.examples.hello-c", collection: "counters", key: "hello") == Array("2".utf8))
        #expect(try store.get(namespace: "org.termhost.examples.hello-swift", collection: "counters", key: "hello-swift") == Array("1".utf8))
        #expect(try store.get(namespace: "org.termhost.examples.hello-swift", collection: "counters", key: "hello") == nil)
        runtime.shutdown()
    }
}

@Suite struct RuntimeStartTests {
    @Test func aServiceProvidedByAnEarlierFeatureIsAvailableInALaterFeaturesActivate() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let log = dir.path + "/callbacks.log"
        let plugins = dir.sub("plugins")
        try Fixtures.cPlugin(in: plugins, dirName: "provider", id: "org.test.provider",
                             defines: ["PROVIDES_SERVICE=\"org.test.provider.answer/1\"", "COMMAND_NAME=\"p\"", "FEATURE_ORDER=1"],
                             extraFeatureJSON: #", "providesServices": ["org.test.provider.answer/1"]"#)
        try Fixtures.cPlugin(in: plugins, dirName: "consumer", id: "org.test.consumer",
                             defines: ["CHECK_SERVICE=\"org.test.provider.answer/1\"", "REQUIRES_SERVICE=\"org.test.provider.answer/1\"", "COMMAND_NAME=\"c\"", "FEATURE_ORDER=2"],
                             extraFeatureJSON: #", "requiresServices": ["org.test.provider.answer/1"]"#)
        _ = dir.write("policy.json", #"{ "settings": { "org.test.consumer": { "log": "\#(log)" } } }"#)
        let runtime = try HostRuntime.start(options(dir, pluginDir: plugins))
        runtime.shutdown()
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.contains("service-available org.test.consumer"))
        #expect(!lines.contains("service-missing org.test.consumer"))
    }

    @Test func aPluginWhoseFeaturesAreAllDisabledIsNotLoadedAndSaysWhy() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let log = dir.path + "/callbacks.log"
        let plugins = dir.sub("plugins")
        try Fixtures.cPlugin(in: plugins, dirName: "off", id: "org.test.off")
        _ = dir.write("policy.json", #"{ "settings": { "org.test.off": { "log": "\#(log)" } } }"#)
        try HostRuntime.start(options(dir, pluginDir: plugins)).shutdown()   // probes (cached from now on) and loads
        #expect(try String(contentsOfFile: log, encoding: .utf8).contains("init org.test.off"))
        try FileManager.default.removeItem(atPath: log)
        _ = dir.write("policy.json", #"{ "disable": ["org.test.off"], "settings": { "org.test.off": { "log": "\#(log)" } } }"#)
        let runtime = try HostRuntime.start(options(dir, pluginDir: plugins))
        defer { runtime.shutdown() }
        #expect(!FileManager.default.fileExists(atPath: log), "no code of a disabled plugin may run")
        #expect(runtime.resolution.feature(FeatureID(checked: "org.test.off"))?.state == .disabled("disabled by operator policy \(dir.path)/policy.json"))
    }

    @Test func aMissingProbeExecutableIsNotCachedAsAQuarantine() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.p")
        var o = options(dir, pluginDir: dir.path + "/plugins")
        o.probe = ProbeRunner(executable: dir.path + "/no-such-probe", timeout: 5)
        var broken = Inspection.run(o, probe: true)
        broken.closeDescriptors()
        #expect(broken.record("org.test.p")?.failure == .probeUnavailable("cannot start \(dir.path)/no-such-probe: No such file or directory"))
        var fixed = Inspection.run(options(dir, pluginDir: dir.path + "/plugins"), probe: true)
        fixed.closeDescriptors()
        #expect(fixed.record("org.test.p")?.probe == "probed")
        #expect(fixed.record("org.test.p")?.failure == nil)
    }

    @Test func fixingTheManifestLiftsTheQuarantine() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let p = try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.m", version: "1.0.0", manifestVersion: "1.1.0")
        var first = Inspection.run(options(dir, pluginDir: dir.path + "/plugins"), probe: true)
        first.closeDescriptors()
        #expect(first.record("org.test.m")?.failure == .entryMismatch(field: "version", manifest: "1.1.0", library: "1.0.0"))
        let text = try String(contentsOfFile: p.manifest, encoding: .utf8).replacingOccurrences(of: "1.1.0", with: "1.0.0")
        try text.write(toFile: p.manifest, atomically: true, encoding: .utf8)
        var second = Inspection.run(options(dir, pluginDir: dir.path + "/plugins"), probe: true)
        second.closeDescriptors()
        #expect(second.record("org.test.m")?.probe == "probed")
        #expect(second.record("org.test.m")?.failure == nil)
    }
}
