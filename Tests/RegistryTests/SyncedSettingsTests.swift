import Foundation
import Testing
import TermhostRegistry

/// The synced user settings layer: below the user config file and above the operator's value,
/// for keys the policy lists in userOverridable only; a bad record is reported by its key and
/// ignored.
@Suite struct SyncedSettingsTests {
    let sync = fid("org.x.sync")
    let policy = DeploymentPolicy(settings: ["org.x.sync": ["interval": .number(30), "vault": .string("/srv")]],
                                  userOverridable: ["org.x.sync": ["interval"]], source: "operator policy /etc/p.json")

    func synced(_ json: String, feature: String = "org.x.sync") -> SyncedSettings {
        SyncedSettings.decode([(key: feature, value: Array(json.utf8))])
    }

    @Test func userFileBeatsSyncedBeatsTheOperatorsValue() {
        let s = synced(#"{"interval": 5}"#)
        let syncedOnly = EffectivePolicy(policy: policy, synced: s)
        #expect(syncedOnly.resolved(sync, "interval")! == (.number(5), .synced))
        #expect(syncedOnly.settings(for: sync) == ["interval": .number(5), "vault": .string("/srv")])
        let user = UserConfig(settings: ["org.x.sync": ["interval": .number(7)]])
        let both = EffectivePolicy(policy: policy, user: user, synced: s)
        #expect(both.resolved(sync, "interval")! == (.number(7), .userConfig))
        #expect(both.settings(for: sync)["interval"] == .number(7))
        #expect(EffectivePolicy(policy: policy).resolved(sync, "interval")! == (.number(30), .policy))
        #expect(EffectivePolicy(policy: policy).setting(sync, "missing") == nil)
    }

    @Test func aSyncedKeyThePolicyDoesNotListIsIgnoredAndReported() {
        let p = EffectivePolicy(policy: policy, synced: synced(#"{"vault": "/tmp/evil", "interval": 5}"#))
        #expect(p.resolved(sync, "vault")! == (.string("/srv"), .policy))
        #expect(p.problems(known: [sync]).map(\.description)
                == ["synced user settings sets 'vault' of feature 'org.x.sync', which the operator's policy does not let users override; ignored"])
        // With no policy, no key is overridable: nothing synced applies.
        let none = EffectivePolicy(synced: synced(#"{"interval": 5}"#))
        #expect(none.setting(sync, "interval") == nil)
        #expect(none.problems(known: [sync]).count == 1)
    }

    @Test func aBadRecordIsReportedByItsKeyAndIgnored() {
        let notObject = synced("[1, 2]")
        #expect(notObject.settings.isEmpty)
        #expect(notObject.rejected.count == 1)
        #expect(notObject.rejected[0].description.hasPrefix("synced user settings: field 'org.x.sync': not a JSON object of settings"))
        let badID = synced(#"{"interval": 5}"#, feature: "Not An ID")
        #expect(badID.settings.isEmpty)
        #expect(badID.rejected[0].description.contains("field 'Not An ID': invalid feature ID"))
        let truncated = synced(#"{"interval": "#)
        let p = EffectivePolicy(policy: policy, synced: truncated)
        #expect(p.setting(sync, "interval") == .number(30))
        #expect(p.problems(known: [sync]).count == 1)
    }

    @Test func editingARecordKeepsItsOtherKeysAndRemovesItWhenEmpty() throws {
        let one = try #require(SyncedSettings.record([:], setting: "interval", to: .number(5)))
        #expect(String(decoding: one, as: UTF8.self) == #"{"interval":5}"#)
        let two = try #require(SyncedSettings.record(["interval": .number(5)], setting: "mode", to: .string("x")))
        #expect(String(decoding: two, as: UTF8.self) == #"{"interval":5,"mode":"x"}"#)
        #expect(SyncedSettings.record(["interval": .number(5)], setting: "interval", to: nil) == nil)
    }
}
