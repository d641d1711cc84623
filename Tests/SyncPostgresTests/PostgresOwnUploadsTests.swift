import Foundation
import SyncCore
import SyncTestSupport
import SyncPostgres
import Testing
import TestSupport

/// The cursor moves past a device's own writes only when the vault's sequence shows nothing
/// else between: a change another device committed while this one was pushing stays ahead of
/// the cursor and is pulled.
@Suite struct PostgresOwnUploadsTests {
    static func hosts(_ range: Range<Int>, _ text: String) -> [SyncChange] { range.map { .put(.host("h\($0)"), text) } }

    @Test func aDevicesOwnPushIsSkippedAndAnotherDevicesChangeInBetweenIsNot() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = try team.device("alice", "laptop"), b = try team.device("bob", "workstation")
        let first = try a.push(Self.hosts(0..<100, "v1"), device: "laptop").compactMap(\.appliedVersion)
        let cursor = a.cursor(.start, skippingOwn: first, device: "laptop")
        #expect(cursor == SyncCursor("100"))
        #expect(try a.pull(after: cursor, limit: 500).records.isEmpty)

        // 50 of A's, then one of B's, then 50 more of A's: only the first run is A's alone.
        var mine = try a.push(Self.hosts(100..<150, "v1"), device: "laptop").compactMap(\.appliedVersion)
        _ = try b.push([.put(.host("from-b"), "b")], device: "workstation")
        mine += try a.push(Self.hosts(150..<200, "v1"), device: "laptop").compactMap(\.appliedVersion)
        let next = a.cursor(cursor, skippingOwn: mine, device: "laptop")
        #expect(next == SyncCursor("150"))
        let pulled = try a.pullAll(after: next).records
        #expect(pulled.count == 51)
        #expect(pulled.first?.id.key == "from-b")

        // B first, then all of A's: the cursor stays where it was.
        _ = try b.push([.put(.host("from-b-2"), "b")], device: "workstation")
        let after = try a.pullAll(after: next).cursor
        _ = try b.push([.put(.host("from-b-3"), "b")], device: "workstation")
        let late = try a.push(Self.hosts(200..<210, "v1"), device: "laptop").compactMap(\.appliedVersion)
        #expect(a.cursor(after, skippingOwn: late, device: "laptop") == after)
        #expect(try a.pullAll(after: after).records.map(\.id.key).first == "from-b-3")
    }
}

/// The engine on PostgreSQL: A's sync after uploading 100 records pulls none of them, while a
/// change B committed between A's pull and A's push is pulled.
@Suite struct PostgresEngineOwnUploadsTests {
    @Test func theNextSyncPullsNoneOfItsOwnUploadButAChangeMadeMeanwhile() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let bRecords = MemoryDevice()
        let b = try SyncEngine(backend: team.backend(user: "bob", device: "workstation"), local: bRecords, store: MemoryDevice(), clock: { 0 })
        let hooked = HookBeforePush(team.backend(user: "alice", device: "laptop"))
        let aRecords = MemoryDevice()
        let a = try SyncEngine(backend: hooked, local: aRecords, store: MemoryDevice(), clock: { 0 })
        #expect(a.sync() == .synced)
        for i in 0..<100 { aRecords.edit(.host("h\(i)"), #"{"address":"h\#(i)"}"#) }
        #expect(a.sync() == .synced)
        #expect(a.sync() == .synced)
        #expect(a.recordsPulled == 0)

        hooked.hook = {
            bRecords.edit(.host("from-b"), #"{"address":"b"}"#)
            _ = b.sync()
        }
        for i in 0..<100 { aRecords.edit(.host("h\(i)"), #"{"address":"h\#(i)","port":2200}"#) }
        #expect(a.sync() == .synced)
        hooked.hook = nil
        #expect(a.sync() == .synced)
        #expect(a.recordsPulled == 101)   // B's change left a gap: the cursor stayed before it
        #expect((try aRecords.read(.host("from-b"))) != nil)
        #expect(a.sync() == .synced)
        #expect(a.recordsPulled == 0)
    }
}
