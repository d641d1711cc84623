import Foundation
import Testing
import TermhostRegistry

/// Who may use termhost.sync-store/1: the operator's policy, then the plugin set, then
/// org.termhost.sync; an unusable choice lends the table to nobody instead of falling back.
@Suite struct SyncProviderChoiceTests {
    static let digest = String(repeating: "a", count: 64)

    static func set(_ provider: String?, listing ids: [String]) -> PluginSet {
        PluginSet(name: "s", version: "1", plugins: ids.map { PluginSet.Entry(id: $0, version: "1.0.0", sha256: digest) }, syncProvider: provider)
    }

    static func policy(_ provider: JSONValue) -> DeploymentPolicy {
        DeploymentPolicy(settings: ["org.termhost.sync": ["provider": provider]], source: "operator policy /etc/termhost/policy.json")
    }

    @Test func thePolicyThenTheSetThenTheDefault() {
        let named = [(path: "/usr/lib/termhost/plugins/plugin-set.json", set: Self.set("com.example.sync", listing: ["com.example.sync"]))]
        #expect(SyncProviderChoice.resolve(policy: DeploymentPolicy(), pluginSets: []) == .builtIn)
        #expect(SyncProviderChoice.resolve(policy: DeploymentPolicy(), pluginSets: named)
                == SyncProviderChoice(plugin: "com.example.sync", source: "the syncProvider of plugin set /usr/lib/termhost/plugins/plugin-set.json", problem: nil))
        #expect(SyncProviderChoice.resolve(policy: Self.policy(.string("org.corp.vault")), pluginSets: named).plugin == "org.corp.vault")
    }

    @Test func anUnusableChoiceLendsTheTableToNobody() {
        let badPolicy = SyncProviderChoice.resolve(policy: Self.policy(.number(3)), pluginSets: [])
        #expect(badPolicy.plugin == nil)
        #expect(badPolicy.problem == "the setting 'provider' of org.termhost.sync in operator policy /etc/termhost/policy.json is not a plugin ID such as org.termhost.sync, so no plugin may use the sync store")
        let unlisted = SyncProviderChoice.resolve(policy: DeploymentPolicy(), pluginSets: [(path: "/a/plugin-set.json", set: Self.set("com.example.sync", listing: ["com.example.other"]))])
        #expect(unlisted.plugin == nil)
        #expect(unlisted.problem == "plugin set /a/plugin-set.json names 'com.example.sync' as its sync provider but does not list that plugin, so no plugin may use the sync store")
        let twoSets = SyncProviderChoice.resolve(policy: DeploymentPolicy(), pluginSets: [
            (path: "/a/plugin-set.json", set: Self.set("com.example.one", listing: ["com.example.one"])),
            (path: "/b/plugin-set.json", set: Self.set("com.example.two", listing: ["com.example.two"])),
        ])
        #expect(twoSets.plugin == nil)
        #expect(twoSets.problem?.hasPrefix("plugin sets /a/plugin-set.json and /b/plugin-set.json name different sync providers ('com.example.one' and 'com.example.two')") == true)
    }

    @Test func aSetsSyncProviderMustBeAPluginID() {
        let json = #"{"name":"n","version":"1","plugins":[],"syncProvider":"Not An ID"}"#
        #expect(throws: RegistryError.invalidDocument(file: "plugin-set.json", field: "syncProvider", detail: "expected a plugin ID such as org.termhost.sync")) {
            try PluginSet.decode(Data(json.utf8), file: "plugin-set.json")
        }
        let ok = #"{"name":"n","version":"1","plugins":[],"syncProvider":"com.example.sync"}"#
        #expect((try? PluginSet.decode(Data(ok.utf8), file: "plugin-set.json"))?.syncProvider == "com.example.sync")
    }
}
