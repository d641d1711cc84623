import Foundation
import Testing
import TestSupport

/// The user's synced settings on the real binary: `termhost settings set` on device B, a sync
/// through a vault folder on each side, and device A's Sync feature uses the value. Both devices
/// run under the same test policy, which lets users set org.termhost.sync's `interval` only.
@Suite struct SyncedSettingsEndToEndTests {
    let shared = TemporaryDirectory()
    var plugins: String { shared.sub("plugins") }
    var vault: String { shared.sub("vault") }

    init() throws {
        try TermhostDevice.syncPlugins(in: shared.sub("plugins"))
    }

    func device(overridable: String = #"["interval"]"#) throws -> TermhostDevice {
        let d = TermhostDevice(plugins: plugins)
        _ = d.dir.write("policy.json", #"{ "userOverridable": { "org.termhost.sync": "# + overridable + " } }")
        let set = try d.run("sync", "backend", "set", "folder", vault, "--create")
        #expect(set.status == 0, "\(set.output)")
        return d
    }

    /// `termhost settings list --json`: "feature key" → "value layer".
    func settings(_ d: TermhostDevice) throws -> [String: String] {
        let list = try d.run("settings", "list", "--json")
        #expect(list.status == 0, "\(list.output)")
        let object = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any]
        let rows = object?["settings"] as? [[String: String]] ?? []
        return Dictionary(uniqueKeysWithValues: rows.map { ("\($0["feature"]!) \($0["key"]!)", "\($0["value"]!) \($0["layer"]!)") })
    }

    /// The interval `termhost sync watch` says it uses, then SIGTERM.
    func watchedInterval(_ d: TermhostDevice) throws -> String {
        let watch = try Background(Paths.termhost, ["sync", "watch"], environment: d.env)
        let err = CollectedOutput(watch.stderr)
        #expect(Wait.until { err.text.contains("a sync every") }, "\(err.text)")
        kill(watch.process.processIdentifier, SIGTERM)
        watch.process.waitUntilExit()
        return err.text
    }

    @Test func aSettingSetOnOneDeviceIsUsedOnTheOther() throws {
        let a = try device(), b = try device()
        let set = try b.run("settings", "set", "org.termhost.sync", "interval", "5")
        #expect(set.status == 0, "\(set.output)")
        #expect(try b.run("sync", "now").status == 0)
        #expect(try a.run("sync", "now").status == 0)
        #expect(try settings(a)["org.termhost.sync interval"] == "5 synced")
        #expect(try watchedInterval(a).contains("a sync every 5 s"))
        // The user config file of this device wins over the synced value.
        _ = a.dir.write("config/termhost/config.json", #"{ "settings": { "org.termhost.sync": { "interval": 7 } } }"#)
        #expect(try settings(a)["org.termhost.sync interval"] == "7 userConfig")
        #expect(try watchedInterval(a).contains("a sync every 7 s"))
    }

    @Test func aKeyThePolicyDoesNotListIsRefusedBySetAndIgnoredWhenSynced() throws {
        // B's policy lets users set interval; A's lets them set nothing.
        let a = try device(overridable: "[]"), b = try device()
        let refused = try a.run("settings", "set", "org.termhost.sync", "interval", "5")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("does not let users set 'interval' of feature 'org.termhost.sync'"), "\(refused.output)")
        #expect(try b.run("settings", "set", "org.termhost.sync", "interval", "5").status == 0)
        #expect(try b.run("sync", "now").status == 0)
        #expect(try a.run("sync", "now").status == 0)
        let doctor = try a.run("doctor", "--json")
        #expect(doctor.stdout.contains("synced user settings sets 'interval' of feature 'org.termhost.sync', which the operator's policy does not let users override; ignored"), "\(doctor.output)")
        #expect(try settings(a)["org.termhost.sync interval"] == nil)
        #expect(try watchedInterval(a).contains("a sync every 60 s"))
    }
}
