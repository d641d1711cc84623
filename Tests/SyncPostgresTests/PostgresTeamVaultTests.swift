import Foundation
import SyncCore
import SyncTestSupport
import SyncPostgres
import Testing
import TestSupport

/// Team vaults: several users, each with their own PostgreSQL role, on one vault; and a server
/// that restarts while devices sync.
@Suite struct PostgresTeamVaultTests {
    @Test func threeDevicesOfThreeUsersSeeOneVault() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let devices = [try team.device("alice", "laptop"), try team.device("bob", "workstation"), try team.device("carol", "tablet")]
        let names = ["laptop", "workstation", "tablet"]
        for (i, d) in devices.enumerated() {
            #expect(try d.push([.put(.host("from-\(names[i])"), names[i])], device: names[i]).allSatisfy { $0.appliedVersion != nil })
        }
        for d in devices {
            #expect(Set(try d.pullAll().records.map(\.id.key)) == ["from-laptop", "from-workstation", "from-tablet"])
        }
    }

    @Test func aRemovedMemberLosesAccessAtItsNextSync() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let alice = try team.device("alice", "laptop"), bob = try team.device("bob", "workstation")
        _ = try bob.push([.put(.host("web"), "web")], device: "workstation")
        let cursor = try bob.pullAll().cursor
        try alice.removeMember(role: "bob")
        // bob's connection is still open: the very next call is refused, pull and push alike.
        let expected = SyncBackendError.denied("role \"bob\" is not a member of vault \"team\"; ask one of the vault's owners to add this role back, or choose another vault with 'termhost sync backend set'")
        #expect(throws: expected) { _ = try bob.pull(after: cursor, limit: 10) }
        #expect(throws: expected) { _ = try bob.push([.put(.host("db"), "db")], device: "workstation") }
        #expect(throws: expected) { _ = try team.device("bob", "workstation") }
        #expect(!expected.isRetryable)
        // The table is not a way around it: the role was never granted the tables.
        let direct = try Shell.run(PostgresServer.bin + "/psql", ["-X", "-h", team.server.socketDirectory, "-U", "bob", "-d", PostgresTeam.database,
                                                                  "-c", "SELECT count(*) FROM termhost_sync.records"],
                                   environment: ["PGPASSWORD": PostgresTeam.members["bob"]!])
        #expect(direct.stderr.contains("permission denied for table records"))
        // Neither may a member who is not an owner manage members.
        let carol = try team.device("carol", "tablet")
        #expect(throws: SyncBackendError.self) { try carol.setMember(role: "bob", access: .editor) }
        // Added back, bob pulls again from where he was.
        try alice.setMember(role: "bob", access: .editor)
        #expect(try bob.pull(after: cursor, limit: 10).records.isEmpty)
    }

    @Test func aReaderPullsButMayNotPush() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let alice = try team.device("alice", "laptop")
        try alice.setMember(role: "dave", access: .reader)
        _ = try alice.push([.put(.host("web"), "web")], device: "laptop")
        let dave = try team.device("dave", "phone")
        #expect(try dave.pullAll().records.count == 1)
        let error = try #require(throws: SyncBackendError.self) { _ = try dave.push([.put(.host("db"), "db")], device: "phone") }
        #expect(error.message.hasSuffix(#"role "dave" has reader access to vault "team", which does not allow this: this role is read-only in the vault, so this device's changes cannot be sent; 'termhost sync discard-local' lists and drops them so syncing goes on, or ask an owner for editor access"#))
    }

    /// The documented membership statements, run in psql by an owner who neither created the
    /// schema nor the vault (before: they read the vault's ID from a table no one else may read).
    @Test func anyOwnerManagesMembersWithTheDocumentedStatements() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        func psql(_ user: String, _ sql: String) throws -> Shell.Result {
            try Shell.run(PostgresServer.bin + "/psql", ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", team.server.socketDirectory,
                                                          "-U", user, "-d", PostgresTeam.database, "-c", sql],
                          environment: ["PGPASSWORD": PostgresTeam.members[user]!, "PATH": "/usr/bin:/bin"])
        }
        let added = try psql("alice", "SELECT termhost_sync.set_vault_member('team', 'dave', 'reader')")
        #expect(added.status == 0, "\(added.output)")
        #expect(try team.device("dave", "phone").pullAll().records.isEmpty)
        let removed = try psql("alice", "SELECT termhost_sync.remove_vault_member('team', 'dave')")
        #expect(removed.status == 0, "\(removed.output)")
        #expect(throws: SyncBackendError.self) { _ = try team.device("dave", "phone") }
        // An editor may not.
        let refused = try psql("bob", "SELECT termhost_sync.set_vault_member('team', 'dave', 'owner')")
        #expect(refused.status != 0 && refused.stderr.contains("editor access"), "\(refused.output)")
    }

    /// A device ID belongs to the role that registered it: another member can neither take it
    /// over by opening with it nor push or acknowledge under it (before: open_vault handed it
    /// to whoever opened with it, and bob's pushes went in as alice's laptop).
    @Test func aMemberCannotPushUnderAnotherMembersDevice() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let alice = try team.device("alice", "laptop")
        _ = try alice.push([.put(.host("web"), "web from alice")], device: "laptop")
        let registered = #"device "laptop" is registered to role "alice", not to "bob""#
        let takeover = try #require(throws: SyncBackendError.self) { _ = try team.device("bob", "laptop") }
        #expect(takeover.message.contains(registered), "\(takeover.message)")
        let bob = try team.device("bob", "workstation")
        let pushed = try #require(throws: SyncBackendError.self) { _ = try bob.push([.put(.host("db"), "db from bob")], device: "laptop") }
        #expect(pushed.message.contains(registered) && pushed.message.contains("a member syncs only under device IDs of its own"), "\(pushed.message)")
        #expect(throws: SyncBackendError.self) { try bob.acknowledge(device: "laptop", cursor: SyncCursor("1")) }
        // Nothing went in under alice's laptop but alice's own write; bob's own device works.
        let records = try alice.pullAll().records
        #expect(records.map(\.id.key) == ["web"] && records.allSatisfy { $0.device == "laptop" })
        #expect(try bob.push([.put(.host("db"), "db from bob")], device: "workstation").first?.appliedVersion != nil)
        #expect(try alice.lastChangeID(device: "laptop") != nil)
    }

    @Test func aServerRestartInTheMiddleOfAPushLosesNothingAndDuplicatesNothing() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = try team.device("alice", "laptop"), b = try team.device("bob", "workstation")
        let before = try b.pullAll().cursor
        let changes = (0..<50).map { SyncChange.put(.host("h\($0)"), "host \($0)", changeID: "c\($0)") }
        // Hold the vault's row lock from another session, so the push waits inside its
        // transaction; then the server goes down under it.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: PostgresServer.bin + "/psql")
        holder.arguments = ["-X", "-h", team.server.socketDirectory, "-U", PostgresServer.adminUser, "-d", PostgresTeam.database,
                            "-c", "BEGIN; SELECT 1 FROM termhost_sync.vaults FOR UPDATE; SELECT pg_sleep(600);"]
        holder.environment = ["PGPASSWORD": PostgresServer.adminPassword]
        holder.standardOutput = FileHandle.nullDevice
        holder.standardError = FileHandle.nullDevice
        try holder.run()
        #expect(Wait.until { (try? team.server.psql("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600)%' AND state = 'active' AND pid <> pg_backend_pid()")) == "1\n" })
        let outcome = UnsafeSendableBox<[Result<[SyncPushResult], SyncBackendError>]>([])
        let pusher = Unchecked(a)
        let thread = Thread {
            do throws(SyncBackendError) { outcome.append(.success(try pusher.value.push(changes, device: "laptop"))) } catch { outcome.append(.failure(error)) }
        }
        thread.start()
        #expect(Wait.until { (try? team.server.psql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")) == "1\n" })
        // The push's own session ends first: a shutdown signals every backend, and on a loaded
        // machine the holder's could end and hand the lock over before the pusher's saw its
        // signal, letting the push commit (seen once under load).
        try team.server.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
        team.server.stop()
        holder.waitUntilExit()
        #expect(Wait.until { outcome.value.count == 1 })
        guard case .failure(let error) = outcome.value.first else { Issue.record("the push did not fail: \(outcome.value)"); return }
        #expect(error.isRetryable)
        try team.server.restart()
        // The engine retries the same changes (same IDs), and pulls, as after any reconnect.
        let results = try a.push(changes, device: "laptop")
        #expect(results.compactMap(\.appliedVersion).count == 50)
        let again = try a.push(changes, device: "laptop")
        #expect(again == results)
        // bob was idle through the restart: his wait sees the connection gone and asks for a
        // pull (the notifications of the retried push were sent while he was away).
        #expect(b.waitForChanges(after: before, seconds: 30))
        let feed = try b.pullAll(after: before)
        #expect(feed.records.count == 50)
        #expect(Set(feed.records.map(\.changeID)) == Set((0..<50).map { "c\($0)" }))
        #expect(try team.server.psql("SELECT seq FROM termhost_sync.vaults", database: PostgresTeam.database) == "50\n")
    }
}

/// Lends a non-Sendable value to one other thread of a test, which uses it alone.
final class Unchecked<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
