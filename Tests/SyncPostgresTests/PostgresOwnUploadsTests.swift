import Foundation
import SyncCore
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
