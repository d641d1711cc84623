import Foundation
import SyncCore
import SyncTestSupport
import SyncPostgres
import Testing
import TestSupport

/// The PostgreSQL backend against a real server: order, compare-and-set, idempotence, the
/// tombstone fence, damage and notifications. Team access and restarts are in their own suites.
@Suite struct PostgresBackendTests {
    @Test func pushedRecordsComeBackInSequenceOrderWithServerVersions() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = try team.device("alice", "laptop")
        let results = try a.push([.put(.host("web"), "web-1"), .put(.host("db"), "db-1")], device: "laptop")
        #expect(results.map(\.appliedVersion) == [SyncVersion("1"), SyncVersion("2")])
        let b = try team.device("bob", "workstation")
        let pulled = try b.pullAll()
        #expect(pulled.records.map(\.id.key) == ["web", "db"])
        #expect(pulled.records.map(\.version) == [SyncVersion("1"), SyncVersion("2")])
        #expect(pulled.records.map(\.device) == ["laptop", "laptop"])
        #expect(pulled.records[0].payload == Array("web-1".utf8))
        #expect(pulled.cursor == SyncCursor("2"))
        #expect(try b.pull(after: pulled.cursor, limit: 100).records.isEmpty)
    }

    @Test func aRetriedChangeIDReturnsItsFirstResultAndAppliesOnce() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = try team.device("alice", "laptop")
        let change = SyncChange.put(.host("web"), "web-1", changeID: "change-1")
        let first = try a.push([change], device: "laptop")
        // The acknowledgement was lost: the engine sends the same change again.
        let retry = try a.push([change], device: "laptop")
        #expect(retry == first)
        #expect(try a.pullAll().records.count == 1)
        #expect(try team.server.psql("SELECT seq FROM termhost_sync.vaults WHERE name = 'team'", database: PostgresTeam.database) == "1\n")
        #expect(try a.lastChangeID(device: "laptop") == "change-1")
        #expect(try a.lastChangeID(device: "never-seen") == nil)
    }

    @Test func aStaleBaseIsAConflictCarryingTheServersRecord() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = try team.device("alice", "laptop"), b = try team.device("bob", "workstation")
        let v1 = try #require(try a.push([.put(.host("web"), "port 22")], device: "laptop")[0].appliedVersion)
        let v2 = try #require(try b.push([.put(.host("web"), "port 2222", base: v1)], device: "workstation")[0].appliedVersion)
        let stale = try a.push([.put(.host("web"), "port 22 user root", base: v1)], device: "laptop")[0]
        let server = try #require(stale.conflictRecord)
        #expect(server.version == v2)
        #expect(server.payload == Array("port 2222".utf8))
        #expect(server.device == "workstation")
        // A new record that another device created meanwhile is a conflict too, not an overwrite.
        _ = try b.push([.put(.host("db"), "db from bob")], device: "workstation")
        #expect(try a.push([.put(.host("db"), "db from alice")], device: "laptop")[0].conflictRecord?.payload == Array("db from bob".utf8))
    }

    @Test func concurrentEditsOfOneRecordFromTwoDevicesApplyExactlyOne() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = try team.device("alice", "laptop"), b = try team.device("bob", "workstation")
        var base = try #require(try a.push([.put(.host("web"), "v0")], device: "laptop")[0].appliedVersion)
        for round in 0..<20 {
            let results = UnsafeSendableBox<[[SyncPushResult]]>([])
            let devices = Unchecked([a, b]), roundBase = base
            DispatchQueue.concurrentPerform(iterations: 2) { i in
                let device = devices.value[i]
                let r = try? device.push([.put(.host("web"), "round \(round) from \(i)", base: roundBase)], device: i == 0 ? "laptop" : "workstation")
                results.append(r ?? [])
            }
            let all = results.value.flatMap { $0 }
            #expect(all.count == 2)
            let applied = all.compactMap(\.appliedVersion)
            #expect(applied.count == 1, "round \(round): \(all)")
            // The loser holds the winner's record: nothing is lost, the engine merges or asks.
            #expect(all.compactMap(\.conflictRecord).first?.version == applied.first)
            base = try #require(applied.first)
        }
        #expect(try a.pullAll().records.count == 1)
    }

    /// The cursor rule: a reader following the feed while two devices write must end up with
    /// every record. A sequence allocated before commit (a BIGSERIAL) would let it pass a
    /// number whose transaction commits later, and skip that record forever.
    @Test func aReaderFollowingTheFeedDuringConcurrentWritesMissesNothing() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let writers = Unchecked([try team.device("alice", "laptop"), try team.device("bob", "workstation")])
        let reader = try team.device("carol", "tablet")
        let done = UnsafeSendableBox<[Bool]>([])
        let threads = (0..<2).map { w in
            Thread {
                for i in 0..<40 { _ = try? writers.value[w].push([.put(.host("w\(w)-\(i)"), "x")], device: w == 0 ? "laptop" : "workstation") }
                done.append(true)
            }
        }
        threads.forEach { $0.start() }
        var seen = Set<String>(), cursor = SyncCursor.start
        while done.value.count < 2 {
            let page = try reader.pull(after: cursor, limit: 3)
            seen.formUnion(page.records.map(\.id.key))
            cursor = page.next
        }
        let rest = try reader.pullAll(after: cursor)
        seen.formUnion(rest.records.map(\.id.key))
        #expect(seen.count == 80)
        #expect(try reader.pullAll().records.count == 80)
    }

    @Test func aDeleteAgainstAnEditReturnsTheTombstoneToTheEditor() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = try team.device("alice", "laptop"), b = try team.device("bob", "workstation"), c = try team.device("carol", "tablet")
        let v1 = try #require(try a.push([.put(.host("web"), "web")], device: "laptop")[0].appliedVersion)
        let gone = try #require(try b.push([.delete(.host("web"), base: v1)], device: "workstation")[0].appliedVersion)
        let edit = try c.push([.put(.host("web"), "web edited", base: v1)], device: "tablet")[0]
        let server = try #require(edit.conflictRecord)
        #expect(server.payload == nil)
        #expect(server.version == gone)
        // The tombstone reaches every device in the feed.
        let feed = try a.pullAll().records
        #expect(feed.count == 1 && feed[0].payload == nil)
    }

    @Test func purgedTombstonesExpireCursorsBehindTheFence() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = try team.device("alice", "laptop"), b = try team.device("bob", "workstation")
        let v1 = try #require(try a.push([.put(.host("web"), "web")], device: "laptop")[0].appliedVersion)
        _ = try a.push([.delete(.host("web"), base: v1)], device: "laptop")
        let head = try a.pullAll().cursor
        try a.acknowledge(device: "laptop", cursor: head)
        // bob's workstation has not acknowledged: nothing may be purged yet.
        #expect(try a.purgeTombstones(force: false) == 0)
        #expect(try b.pullAll().records.count == 1)
        // Forced (bob offline for good): purged, and bob's old cursor now needs a full pull.
        #expect(try a.purgeTombstones(force: true) == 1)
        #expect(throws: SyncBackendError.cursorExpired) { try b.pull(after: SyncCursor("1"), limit: 10) }
        #expect(try b.pullAll().records.isEmpty)
        #expect(try a.pull(after: head, limit: 10).records.isEmpty)
    }

    @Test func aTombstoneEveryDeviceAcknowledgedIsPurged() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = try team.device("alice", "laptop"), b = try team.device("bob", "workstation")
        let v1 = try #require(try a.push([.put(.host("web"), "web")], device: "laptop")[0].appliedVersion)
        _ = try a.push([.delete(.host("web"), base: v1)], device: "laptop")
        for (backend, device) in [(a, "laptop"), (b, "workstation")] {
            try backend.acknowledge(device: device, cursor: try backend.pullAll().cursor)
        }
        try team.server.psql("DELETE FROM termhost_sync.devices WHERE device = 'admin-console'", database: PostgresTeam.database)
        #expect(try a.purgeTombstones(force: false) == 1)
        #expect(try b.pull(after: SyncCursor("2"), limit: 10).records.isEmpty)
    }

    @Test func aRowChangedBehindTheBackendsBackIsReportedAsDamageNotApplied() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = try team.device("alice", "laptop")
        _ = try a.push([.put(.host("web"), #"{"port":22}"#), .put(.host("db"), #"{"port":5432}"#)], device: "laptop")
        try team.server.psql("UPDATE termhost_sync.records SET body = '\\x7b22706f7274223a' WHERE key = 'web'", database: PostgresTeam.database)
        let pulled = try a.pullAll()
        #expect(pulled.records.map(\.id.key) == ["db"])
        #expect(pulled.damaged.count == 1)
        #expect(pulled.damaged.first?.location == "vault 'team' record org.termhost.ssh/hosts/web version 1")
        #expect(pulled.damaged.first?.reason == "its body does not match the SHA-256 the server stored with it (changed outside Termhost)")
        #expect(pulled.damaged.first?.raw == Array(#"{"port":"#.utf8))
        #expect(pulled.cursor == SyncCursor("2"))
    }

    /// A row over 1 MiB: the server refuses to store one (migration 3), and one that is there
    /// anyway (written with the schema's triggers off) never crosses the wire: the device gets
    /// its size and quarantines it unread, and the rest of the page arrives.
    @Test func aRecordOverOneMiBIsNeitherStoredNorDownloaded() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = try team.device("alice", "laptop")
        _ = try a.push([.put(.host("web"), #"{"port":22}"#), .put(.host("db"), #"{"port":5432}"#)], device: "laptop")
        let huge = "decode(repeat('78', 3145728), 'hex')"
        #expect(throws: Shell.Failure.self) {
            try team.server.psql("UPDATE termhost_sync.records SET body = \(huge), digest = sha256(\(huge)) WHERE key = 'web'", database: PostgresTeam.database)
        }
        try team.server.psql("SET session_replication_role = replica; UPDATE termhost_sync.records SET body = \(huge), digest = sha256(\(huge)) WHERE key = 'web'",
                             database: PostgresTeam.database)
        let pulled = try a.pullAll()
        #expect(pulled.records.map(\.id.key) == ["db"])
        #expect(pulled.damaged.map(\.reason) == ["its body is 3145728 bytes, more than the 1048576 a record may hold: refused unread"])
        #expect(pulled.damaged.first?.raw == [])
    }

    @Test func aNotificationWakesAWaitingDeviceAndAReconnectAsksForAPull() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = try team.device("alice", "laptop"), b = try team.device("bob", "workstation")
        // Just connected: whatever was sent while away is lost, so pull first.
        #expect(b.waitForChanges(after: .start, seconds: 0))
        let cursor = try b.pullAll().cursor
        let woke = UnsafeSendableBox<[Bool]>([])
        let waiting = Unchecked(b)
        let waiter = Thread { woke.append(waiting.value.waitForChanges(after: cursor, seconds: 60)) }
        waiter.start()
        _ = try a.push([.put(.host("web"), "web")], device: "laptop")
        #expect(Wait.until { woke.value == [true] })
    }

    @Test func theSchemaIsMigratedOnceAndANewerSchemaIsRefused() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        #expect(try team.server.psql("SELECT version FROM termhost_sync.schema_version ORDER BY version", database: PostgresTeam.database) == "1\n2\n3\n4\n")
        _ = try team.device("alice", "laptop")
        #expect(try team.server.psql("SELECT count(*) FROM termhost_sync.schema_version", database: PostgresTeam.database) == "4\n")
        try team.server.psql("INSERT INTO termhost_sync.schema_version (version) VALUES (99)", database: PostgresTeam.database)
        #expect(throws: SyncBackendError.invalid("the vault schema in this database is version 99, newer than this Termhost knows (4): update Termhost")) {
            _ = try team.device("bob", "workstation")
        }
    }

    /// A vault written before history was kept (schema 3): the upgrade keeps each record's
    /// current version, without a time, and every later write is kept with the server's time.
    @Test func upgradingAVaultKeepsItsCurrentVersionsAsHistory() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = try team.device("alice", "laptop")
        // Back to schema 3, as a vault made by an earlier Termhost.
        try team.server.psql("""
            DROP TRIGGER record_history ON termhost_sync.records; DROP TRIGGER purge_history ON termhost_sync.vaults;
            DROP FUNCTION termhost_sync.history(uuid, text, text, text, integer); DROP FUNCTION termhost_sync.keep_history();
            DROP FUNCTION termhost_sync.drop_purged_history(); DROP TABLE termhost_sync.history;
            DELETE FROM termhost_sync.schema_version WHERE version = 4
            """, database: PostgresTeam.database)
        guard case .applied(let first) = try a.push([.put(.host("web"), "v1")], device: "laptop")[0] else { Issue.record("refused"); return }
        guard case .applied(let second) = try a.push([.put(.host("web"), "v2", base: first)], device: "laptop")[0] else { Issue.record("refused"); return }

        // The schema's owner upgrades it (a member may not), as the error to members says.
        let admin = team.backend(user: PostgresServer.adminUser, device: "admin-console")
        _ = try admin.open(device: "admin-console")
        admin.close()
        let b = try team.device("bob", "workstation")
        let upgraded = try b.history(of: .host("web"), limit: 10)
        #expect(upgraded.map(\.version) == [second] && upgraded.first?.payload == Array("v2".utf8) && upgraded.first?.storedAt == nil)
        guard case .applied(let third) = try b.push([.put(.host("web"), "v3", base: second)], device: "workstation")[0] else { Issue.record("refused"); return }
        let later = try a.history(of: .host("web"), limit: 10)
        #expect(later.map(\.version) == [third, second])
        #expect(later.first.flatMap(\.storedAt).map { abs($0 - Date().timeIntervalSince1970) < 600 } == true)
        #expect(later.first?.device == "workstation" && later.first?.number == Int64(third.token))
    }

    /// Review finding: a member could fill the history with 100,000 versions of 1 MiB, and one
    /// `sync history` held them all. An answer holds the newest 64 MiB of bodies (the version
    /// that passes the budget included), whatever the limit.
    @Test func aHistoryAnswerHoldsAtMostItsBudgetOfBodies() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = try team.device("alice", "laptop")
        _ = try a.push([.put(.host("big"), "v1")], device: "laptop")
        let body = "decode(repeat('78', 1048000), 'hex')"
        try team.server.psql("""
            INSERT INTO termhost_sync.history (vault_id, seq, namespace, collection, key, body, digest, change_id, device)
            SELECT v.id, 1000000 + g, 'org.termhost.ssh', 'hosts', 'big', \(body), sha256(\(body)), 'c' || g, 'laptop'
            FROM termhost_sync.vaults v, generate_series(1, 80) g WHERE v.name = 'team'
            """, database: PostgresTeam.database)
        let versions = try a.history(of: .host("big"), limit: 1000)
        // 64 MiB of bodies: 64 versions of 1,048,000 bytes fit, and the 65th passes the budget.
        #expect(versions.count == 65, "\(versions.count)")
        #expect(versions.map(\.number) == (1000016...1000080).reversed().map { Int64($0) })
        #expect(versions.allSatisfy { $0.payload?.count == 1_048_000 && $0.damage == nil })
    }

    @Test func aRoleThatMayNotMigrateIsToldWhoCan() throws {
        let dir = TemporaryDirectory("termhost-pg")
        defer { dir.remove() }
        let server = try PostgresServer(in: dir)
        defer { server.stop() }
        try server.createDatabase("fresh")
        try server.createRole("alice", password: "Alice-Pw-1")
        let settings = PostgresSettings(host: server.socketDirectory, database: "fresh", user: "alice", vault: "team")
        let error = try #require(throws: SyncBackendError.self) { _ = try PostgresBackend(settings: settings, password: "Alice-Pw-1").open(device: "laptop") }
        #expect(error.message.hasPrefix("the vault schema needs migration 1 of 4 and this role may not apply it (permission denied for database fresh): have the database's owner connect once"))
    }

    @Test func aWrongPasswordIsDeniedAndNeverShown() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let b = team.backend(user: "alice", device: "laptop", password: "Wrong-Secret-77")
        let error = try #require(throws: SyncBackendError.self) { _ = try b.open(device: "laptop") }
        guard case .denied(let message) = error else { Issue.record("not denied: \(error)"); return }
        #expect(message.contains("password authentication failed for user \"alice\""))
        #expect(!message.contains("Wrong-Secret-77") && !b.summary.contains("Wrong-Secret-77"))
        #expect(b.summary == "postgresql alice@[\(team.server.socketDirectory)]:5432/termhost vault 'team' (Unix socket)")
    }
}
