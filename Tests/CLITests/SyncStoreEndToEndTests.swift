import Foundation
import Testing
import TestSupport

/// termhost.sync-store/1 on the real binary with Tests/Fixtures/sync-store-plugin.c: only the
/// plugin the operator's policy or else the plugin set names as the sync provider may read other
/// plugins' syncable records (never one a user's config names), only declared collections are
/// reachable, and the secrets are not behind it. termhost.store/1's journal_since shows a plugin
/// its own namespace only.
@Suite struct SyncStoreEndToEndTests {
    static func plugin(in parent: String, id: String, command: String) throws {
        let dir = parent + "/" + command
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let cc = try Shell.run("/usr/bin/cc", ["-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-pedantic",
                                               "-fPIC", "-shared", "-I", Paths.sdkInclude, "-o", dir + "/libsyncstore.so",
                                               Paths.root + "/Tests/Fixtures/sync-store-plugin.c",
                                               "-DPLUGIN_ID=\"\(id)\"", "-DCOMMAND_NAME=\"\(command)\""])
        guard cc.status == 0 else { throw Shell.Failure(description: "cc failed: \(cc.output)") }
        _ = FileManager.default.createFile(atPath: dir + "/manifest.json", contents: Data("""
        { "id": "\(id)", "version": "1.0.0", "abi": "\(CancelEndToEndTests.abi)", "library": "libsyncstore.so",
          "features": [ { "id": "\(id)", "version": "1.0.0", "order": 100,
                          "commands": [ { "name": "\(command)", "summary": "sync-store fixture" } ] } ] }
        """.utf8))
    }

    struct Setup {
        let dir = TemporaryDirectory()
        let cli: CLI
        init(provider: String?) throws {
            cli = CLI(dir)
            try SyncStoreEndToEndTests.plugin(in: cli.plugins, id: "org.test.syncstore", command: "syncstore")
            try SyncStoreEndToEndTests.plugin(in: cli.plugins, id: "org.test.other", command: "other")
            if let provider { _ = cli.policy(#"{ "settings": { "org.termhost.sync": { "provider": "\#(provider)" } } }"#) }
        }
    }

    @Test func aPluginThatIsNotTheSyncProviderIsDenied() throws {
        let s = try Setup(provider: nil)
        try s.cli.run("syncstore", "seed")
        let r = try s.cli.run("syncstore", "read", "org.test.syncstore")
        #expect(r.output.contains("collections: 4 collections: only the sync provider 'org.termhost.sync' may read or write other plugins' syncable records; plugin 'org.test.syncstore' is not it (named by the built-in default)"))
        #expect(r.output.contains("get notes: 4 get: only the sync provider"))
        #expect(r.output.contains("journal: 4 journal_since: only the sync provider"))
        #expect(!r.output.contains("hi"))
    }

    @Test func theProviderReadsOnlyDeclaredCollectionsAndNoSecret() throws {
        let s = try Setup(provider: "org.test.syncstore")
        let seeded = try s.cli.run("syncstore", "seed")
        #expect(seeded.output.contains("declare bad: 1 declare_syncable: device-local fields need TERMHOST_SYNC_MERGE_FIELDS: only JSON objects have fields to strip"))
        let secret = seeded.output.split(separator: "\n").first { $0.hasPrefix("secret ") }.map { String($0.dropFirst(7)) } ?? "?"
        let r = try s.cli.run("syncstore", "read", "org.test.syncstore")
        #expect(r.output.contains("collection org.test.other/notes merge 2 local [last_used]"))
        #expect(r.output.contains("collection org.test.syncstore/notes merge 2 local [last_used]"))
        #expect(r.output.contains(#"{"text":"hi","last_used":"here"}"# + "\nget notes: ok"))
        #expect(r.output.contains("get private: 4 get: collection 'private' of 'org.test.syncstore' is not declared syncable"))
        #expect(r.output.contains("journal org.test.syncstore/notes/n1 put"))
        #expect(!r.output.contains("journal org.test.syncstore/private"))
        #expect(!r.output.contains(secret))
        // Another plugin asking is still denied.
        let other = try s.cli.run("other", "read", "org.test.syncstore")
        #expect(other.output.contains("collections: 4 collections: only the sync provider 'org.test.syncstore' may read"))
    }

    @Test func theProviderAppliesARemoteVersionToADeclaredCollectionOnly() throws {
        let s = try Setup(provider: "org.test.syncstore")
        try s.cli.run("syncstore", "seed")
        #expect(try s.cli.run("syncstore", "apply", "org.test.syncstore", #"{"text":"from afar"}"#).output.contains("apply: ok"))
        #expect(try s.cli.run("syncstore", "read", "org.test.syncstore").output.contains(#"{"text":"from afar"}"#))
        #expect(try s.cli.run("other", "apply", "org.test.syncstore", "x").output.contains("apply: 4 apply: only the sync provider"))
    }

    /// ABI 1.4: the owner's check, declared in C, is what the provider's `check` answers; its
    /// reason comes back on one line with control characters made visible; only the provider
    /// may ask; a check for a collection that is not syncable is refused at init.
    @Test func theProviderRunsTheOwnersCheckAndShowsItsReasonSafely() throws {
        let s = try Setup(provider: "org.test.syncstore")
        let seeded = try s.cli.run("syncstore", "seed")
        #expect(seeded.output.contains("check private: 1 declare_sync_check: collection 'private' is not declared syncable (declare_syncable first)"), "\(seeded.output)")
        #expect(try s.cli.run("syncstore", "check", "org.test.syncstore", #"{"text":"fine"}"#).output.contains("check: ok"))
        let refused = try s.cli.run("syncstore", "check", "org.test.syncstore", #"{"text":"forbidden"}"#).output
        #expect(refused.contains("check: 1 text: a note may not say forbidden\\033[2J"), "\(refused)")
        #expect(!refused.contains("\u{1b}"))
        #expect(try s.cli.run("other", "check", "org.test.syncstore", "x").output.contains("check: 4 check: only the sync provider"))
    }

    /// A full pull after `sync reset` applies every record again: the unchanged ones must not be
    /// written (no journal row) nor announced (each announcement costs a retiring plugin a wait).
    @Test func applyingTheStoredValueAgainWritesNothing() throws {
        let s = try Setup(provider: "org.test.syncstore")
        try s.cli.run("syncstore", "seed")
        for _ in 0..<2 {
            #expect(try s.cli.run("syncstore", "apply", "org.test.syncstore", #"{"text":"from afar"}"#).output.contains("apply: ok"))
        }
        let read = try s.cli.run("syncstore", "read", "org.test.syncstore").output
        // The seed's put and the first apply's.
        #expect(read.components(separatedBy: "journal org.test.syncstore/notes/n1 put").count - 1 == 2, "\(read)")
    }

    @Test func storeJournalSinceListsOnlyTheCallersOwnNamespace() throws {
        let s = try Setup(provider: nil)
        try s.cli.run("syncstore", "seed")
        try s.cli.run("other", "seed")
        let own = try s.cli.run("syncstore", "own").output
        #expect(own.contains("journal org.test.syncstore/notes/n1 put\njournal org.test.syncstore/private/p1 put\n"))
        #expect(own.contains("own journal: ok"))
        #expect(!own.contains("org.test.other"), "\(own)")
    }

    /// The system's plugin directory holding the fixture as org.test.syncstore, pinned by a
    /// plugin set naming `provider` as the sync provider; the set's path.
    static func pluginSet(_ cli: CLI, provider: String) throws -> String {
        let system = cli.dir.sub("system") + "/termhost/plugins"
        try plugin(in: system, id: "org.test.syncstore", command: "syncstore")
        let hash = try Shell.run("/usr/bin/sha256sum", [system + "/syncstore/libsyncstore.so"]).stdout.prefix(64)
        return cli.dir.write("system/termhost/plugins/plugin-set.json", """
        { "name": "test", "version": "1", "syncProvider": "\(provider)",
          "plugins": [ { "id": "org.test.syncstore", "version": "1.0.0", "sha256": "\(hash)" } ] }
        """)
    }

    @Test func thePluginSetNamesTheProviderThePolicyOverridesItAndAUserCannot() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        let set = try Self.pluginSet(cli, provider: "org.test.syncstore")
        // The default provider's ID, on a plugin that is not the one the set names.
        try Self.plugin(in: cli.plugins, id: "org.termhost.sync", command: "other")
        try cli.run("syncstore", "seed")
        let granted = try cli.run("syncstore", "read", "org.test.syncstore").output
        #expect(granted.contains("collections: ok"), "\(granted)")
        #expect(granted.contains("journal org.test.syncstore/notes/n1 put"))
        let denied = "collections: 4 collections: only the sync provider 'org.test.syncstore' may read or write other plugins' syncable records; plugin 'org.termhost.sync' is not it (named by the syncProvider of plugin set \(set))"
        #expect(try cli.run("other", "read", "org.test.syncstore").output.contains(denied))
        #expect(try cli.run("doctor").stdout.contains("\nSync provider: org.test.syncstore (the syncProvider of plugin set \(set))\n"))
        let json = try JSONSerialization.jsonObject(with: Data(try cli.run("doctor", "--json").stdout.utf8)) as? [String: Any]
        #expect(json?["syncProvider"] as? [String: String] == ["plugin": "org.test.syncstore", "source": "the syncProvider of plugin set \(set)"])

        _ = dir.write("config/termhost/config.json", #"{ "settings": { "org.termhost.sync": { "provider": "org.termhost.sync" } } }"#)
        #expect(try cli.run("other", "read", "org.test.syncstore").output.contains(denied))

        let policy = cli.policy(#"{ "settings": { "org.termhost.sync": { "provider": "org.termhost.sync" } } }"#)
        #expect(try cli.run("other", "read", "org.test.syncstore").output.contains("collections: ok"))
        #expect(try cli.run("syncstore", "read", "org.test.syncstore").output.contains(
            "plugin 'org.test.syncstore' is not it (named by the setting 'provider' of org.termhost.sync in operator policy \(policy))"))
    }

    @Test func aPluginSetNamingAPluginItDoesNotListLendsTheStoreToNobody() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        let set = try Self.pluginSet(cli, provider: "org.test.absent")
        try Self.plugin(in: cli.plugins, id: "org.termhost.sync", command: "other")
        try cli.run("syncstore", "seed")
        let problem = "plugin set \(set) names 'org.test.absent' as its sync provider but does not list that plugin, so no plugin may use the sync store"
        for command in ["syncstore", "other"] {
            let r = try cli.run(command, "read", "org.test.syncstore").output
            #expect(r.contains("collections: 4 collections: no plugin may read or write other plugins' syncable records: \(problem) (see 'termhost doctor')"), "\(r)")
            #expect(!r.contains("hi"))
        }
        let doctor = try cli.run("doctor")
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("  - \(problem)\n"))
        #expect(doctor.stdout.contains("\nSync provider: none, the sync store is lent to no plugin (the syncProvider of plugin set \(set))\n"))
    }
}
