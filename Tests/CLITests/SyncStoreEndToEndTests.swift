import Foundation
import Testing
import TestSupport

/// termhost.sync-store/1 on the real binary with Tests/Fixtures/sync-store-plugin.c: only the
/// plugin the operator's policy names as the sync provider may read other plugins' syncable
/// records, only declared collections are reachable, and the secrets are not behind it.
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
        #expect(r.output.contains("collections: 4 collections: only the sync provider 'org.termhost.sync' may read or write other plugins' syncable records; plugin 'org.test.syncstore' is not it (the operator's policy setting 'provider' of org.termhost.sync names it)"))
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
}
