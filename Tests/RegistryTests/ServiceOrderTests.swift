import Testing
import TermhostRegistry

/// A feature that requires a service starts after the feature providing it, whatever their
/// order keys: activated first, the consumer's lookup of the service would get NULL.
@Suite struct ServiceOrderTests {
    @Test func consumerWithALowerOrderKeyStartsAfterItsProvider() throws {
        let r = try registry([
            feature("org.x.sftp", order: 1, services: ["org.x.ssh.transport/1"]),
            feature("org.x.ssh", order: 500, provides: ["org.x.ssh.transport/1"]),
        ])
        #expect(r.resolve(EffectivePolicy(), hostServices: []).enabledIDs == ["org.x.ssh", "org.x.sftp"])
    }

    @Test func consumerWaitsForEveryProviderItRequires() throws {
        let r = try registry([
            feature("org.x.assistant", order: 0, services: ["org.x.a/1", "org.x.b/1", "termhost.log/1"]),
            feature("org.x.pa", order: 300, provides: ["org.x.a/1"]),
            feature("org.x.pb", order: 200, provides: ["org.x.b/1"]),
            feature("org.x.other", order: 100),
        ])
        #expect(r.resolve(EffectivePolicy(), hostServices: ["termhost.log/1"]).enabledIDs
                    == ["org.x.other", "org.x.pb", "org.x.pa", "org.x.assistant"])
    }

    @Test func aFeatureRequiringAServiceItProvidesIsNoCycle() throws {
        let r = try registry([feature("org.x.self", services: ["org.x.s/1"], provides: ["org.x.s/1"])])
        #expect(r.resolve(EffectivePolicy(), hostServices: []).enabledIDs == ["org.x.self"])
    }

    @Test func providersThatRequireEachOthersServicesAreACycle() throws {
        let r = try registry([
            feature("org.x.a", services: ["org.x.b/1"], provides: ["org.x.a/1"]),
            feature("org.x.b", services: ["org.x.a/1"], provides: ["org.x.b/1"]),
        ])
        let res = r.resolve(EffectivePolicy(), hostServices: [])
        #expect(res.state("org.x.a")?.reason == "dependency cycle between 'org.x.a', 'org.x.b'; none of them was created")
    }
}
