import Testing
import TermhostRegistry

@Suite struct OrderResolverTests {
    @Test func orderKeysDecideAndTiesBreakByID() throws {
        let r = try registry([feature("org.b.x", order: 10), feature("org.a.x", order: 10), feature("org.c.x", order: 5)])
        #expect(r.resolve(EffectivePolicy(), hostServices: []).enabledIDs == ["org.c.x", "org.a.x", "org.b.x"])
    }

    @Test func afterAndBeforeOverrideOrderKeys() throws {
        let r = try registry([
            feature("org.x.first", order: 1, after: ["org.x.late"]),
            feature("org.x.late", order: 50),
            feature("org.x.early", order: 99, before: ["org.x.late"]),
        ])
        #expect(r.resolve(EffectivePolicy(), hostServices: []).enabledIDs == ["org.x.early", "org.x.late", "org.x.first"])
    }

    @Test func constraintsOnAbsentFeaturesAreIgnored() throws {
        let r = try registry([feature("org.x.a", after: ["org.x.ghost"]), feature("org.x.b", before: ["org.x.ghost"])])
        #expect(r.resolve(EffectivePolicy(), hostServices: []).enabledIDs == ["org.x.a", "org.x.b"])
    }

    @Test func requiredFeaturesStartFirstWhateverTheirOrderKey() throws {
        let r = try registry([feature("org.x.ssh", order: 500), feature("org.x.sftp", order: 1, requires: ["org.x.ssh"])])
        #expect(r.resolve(EffectivePolicy(), hostServices: []).enabledIDs == ["org.x.ssh", "org.x.sftp"])
    }

    @Test func cycleIsReportedWithItsMembersAndTheRestStillStarts() throws {
        let r = try registry([
            feature("org.x.a", after: ["org.x.c"]), feature("org.x.b", after: ["org.x.a"]),
            feature("org.x.c", after: ["org.x.b"]), feature("org.x.free"),
        ])
        let res = r.resolve(EffectivePolicy(), hostServices: [])
        #expect(res.enabledIDs == ["org.x.free"])
        let members = [fid("org.x.a"), fid("org.x.b"), fid("org.x.c")]
        for id in ["org.x.a", "org.x.b", "org.x.c"] {
            #expect(res.state(id) == .unavailable(.cycle(members)))
        }
        #expect(res.state("org.x.a")?.reason == "dependency cycle between 'org.x.a', 'org.x.b', 'org.x.c'; none of them was created")
    }

    @Test func featureDownstreamOfACycleIsUnavailableWithItsOwnReason() throws {
        let r = try registry([
            feature("org.x.a", requires: ["org.x.b"]), feature("org.x.b", requires: ["org.x.a"]),
            feature("org.x.user", requires: ["org.x.a"]),
        ])
        let res = r.resolve(EffectivePolicy(), hostServices: [])
        #expect(res.state("org.x.user") == .unavailable(.unavailableDependency(fid("org.x.user"), needs: fid("org.x.a"))))
    }
}
