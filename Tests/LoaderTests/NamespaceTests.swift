import Foundation
import Testing
import TermhostLoader
import TermhostRegistry
import TermhostRuntime
import TestSupport

/// A feature or service ID belongs to its plugin's ID namespace; a plugin cannot take over
/// another's feature (`com.evil.plugin` declaring `org.termhost.ssh`).
@Suite struct NamespaceTests {
    @Test func aFeatureOutsideThePluginsNamespaceIsRefusedAndTheRealOneKeepsIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        // Found first ("a-evil" sorts before "b-real"): before the rule it took the feature over.
        let evil = try Fixtures.cPlugin(in: plugins, dirName: "a-evil", id: "com.evil.plugin",
                                        defines: ["FEATURE_ID=\"org.test.victim\"", "COMMAND_NAME=\"victim\""])
        try Fixtures.cPlugin(in: plugins, dirName: "b-real", id: "org.test.victim", defines: ["COMMAND_NAME=\"victim\""])
        let runtime = try HostRuntime.start(options(dir, pluginDir: plugins))
        defer { runtime.shutdown() }
        let r = runtime.records.first { $0.directory == evil.directory }
        #expect(r?.failure == .badManifest("\(evil.manifest): field 'features[0].id': plugin 'com.evil.plugin' declares feature 'org.test.victim', which is outside its ID namespace; a plugin's feature IDs are its own ID or start with its ID and a dot ('com.evil.plugin.…')"))
        #expect(runtime.resolution.commandOwners["victim"]?.rawValue == "org.test.victim")
        #expect(runtime.resolution.feature(FeatureID(checked: "org.test.victim"))?.descriptor.source == "plugin 'org.test.victim' (\(plugins)/b-real)")
        #expect(runtime.registryProblems.isEmpty)
    }

    @Test func aPluginWhoseIDIsAPrefixCannotClaimTheFeatureOfThePluginNamedByIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        let outer = try Fixtures.cPlugin(in: plugins, dirName: "a", id: "org.test",
                                         defines: ["FEATURE_ID=\"org.test.inner\"", "COMMAND_NAME=\"a\""])
        let inner = try Fixtures.cPlugin(in: plugins, dirName: "b", id: "org.test.inner", defines: ["COMMAND_NAME=\"b\""])
        let runtime = try HostRuntime.start(options(dir, pluginDir: plugins))
        defer { runtime.shutdown() }
        #expect(runtime.records.first { $0.directory == outer.directory }?.failure
                == .featureClaimed("plugin 'org.test' declares feature 'org.test.inner', which is outside its ID namespace and belongs to plugin 'org.test.inner'; a plugin's feature IDs are its own ID or start with its ID and a dot ('org.test.…'); refused, and 'org.test.inner' (\(inner.directory)) keeps it"))
        #expect(runtime.resolution.commandOwners["b"]?.rawValue == "org.test.inner")
        #expect(runtime.resolution.commandOwners["a"] == nil)
    }

    @Test func aServiceOutsideThePluginsNamespaceOrAHostServiceIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        let foreign = try Fixtures.cPlugin(in: plugins, dirName: "f", id: "org.test.f", defines: ["PROVIDES_SERVICE=\"org.termhost.ssh.transport/1\""],
                                           extraFeatureJSON: #", "providesServices": ["org.termhost.ssh.transport/1"]"#)
        let host = try Fixtures.cPlugin(in: plugins, dirName: "h", id: "org.test.h", defines: ["PROVIDES_SERVICE=\"termhost.store/1\"", "COMMAND_NAME=\"h\""],
                                        extraFeatureJSON: #", "providesServices": ["termhost.store/1"]"#)
        var i = Inspection.run(options(dir, pluginDir: plugins), probe: true)
        i.closeDescriptors()
        #expect(i.record(dir: "f")?.failure == .badManifest("\(foreign.manifest): field 'features[0].providesServices[0]': plugin 'org.test.f' provides service 'org.termhost.ssh.transport/1', which is outside its ID namespace; a plugin's service IDs start with its ID ('org.test.f.name/1') and the host's own (termhost.*) are reserved"))
        #expect(i.record(dir: "h")?.failure?.description.hasPrefix("\(host.manifest): field 'features[0].providesServices[0]': plugin 'org.test.h' provides service 'termhost.store/1'") == true)
    }

    @Test func theShippedPluginsManifestsKeepToTheirNamespaces() throws {
        // Their manifests are derived from the code (`termhost plugins manifest`), as staged.
        let libraries = ["libSSHPlugin.so", "libSFTPPlugin.so", "libMetricsPlugin.so", "libForwardingPlugin.so",
                         "libHelloSwiftPlugin.so", "libSwiftServicesFixture.so"]
        for library in libraries {
            #expect(throws: Never.self, "\(library)") {
                try PluginManifest.decode(Fixtures.derivedManifest(of: Paths.products + "/" + library), file: library)
            }
        }
    }
}
