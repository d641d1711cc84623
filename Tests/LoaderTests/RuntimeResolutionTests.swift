import Foundation
import Testing
import TermhostLoader
import TermhostRegistry
import TermhostRuntime
import TestSupport

/// Registry problems found among real, loaded plugins: each names its culprits, and the host
/// carries on with everything else.
@Suite struct RuntimeResolutionTests {
    @Test func twoPluginsDeclaringTheSameFeatureAreBothNamed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        let a = try Fixtures.cPlugin(in: plugins, dirName: "a", id: "org.test.a", defines: ["FEATURE_ID=\"org.test.shared\"", "COMMAND_NAME=\"a\""])
        let b = try Fixtures.cPlugin(in: plugins, dirName: "b", id: "org.test.b", defines: ["FEATURE_ID=\"org.test.shared\"", "COMMAND_NAME=\"b\""])
        let runtime = try HostRuntime.start(options(dir, pluginDir: plugins))
        defer { runtime.shutdown() }
        #expect(runtime.registryProblems == [.duplicateFeature(FeatureID(checked: "org.test.shared"),
                                                               first: "plugin 'org.test.a' (\(a.directory))",
                                                               second: "plugin 'org.test.b' (\(b.directory))")])
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
