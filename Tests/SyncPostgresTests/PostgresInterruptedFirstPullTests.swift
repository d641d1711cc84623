import Foundation
import SyncCore
import SyncTestSupport
import SyncPostgres
import Testing
import TestSupport

/// A device's first download of a 5,000-record vault, cut part way (the connection lost, the
/// server restarted, the device killed), against a real PostgreSQL server. Whatever the cut,
/// the next sync ends with every record of the vault, no conflict and nothing of the device's
/// own lost. A killed device is a new engine over the same store: only what the store held
/// at the cut survives, as after `kill -9` (each page is applied in one transaction).
@Suite struct PostgresInterruptedFirstPullTests {
    static let count = 5_000

    /// The real backend, with `cut` run before the pulls numbered in `at` (1 is the first).
    final class CutBackend: ForwardingBackend {
        let at: Set<Int>
        let cut: () throws(SyncBackendError) -> Void
        private(set) var pulls = 0

        init(_ inner: SyncBackend, at: Set<Int>, cut: @escaping () throws(SyncBackendError) -> Void) {
            self.at = at
            self.cut = cut
            super.init(inner)
        }

        override func pull(after cursor: SyncCursor, limit: Int) throws(SyncBackendError) -> SyncPage {
            pulls += 1
            if at.contains(pulls) { try cut() }
            return try inner.pull(after: cursor, limit: limit)
        }
    }

    /// A vault of `count` hosts written by alice's laptop, and bob's new workstation, which has
    /// one host of its own the vault has never seen.
    func vault(_ team: PostgresTeam) throws -> MemoryDevice {
        let a = MemoryDevice("laptop")
        for i in 0..<Self.count { a.putHost("h\(i)", #"{"address":"10.0.\#(i / 256).\#(i % 256)"}"#) }
        let engineA = try SyncEngine(backend: team.backend(user: "alice", device: a.name), local: a, store: a, clock: { 0 })
        #expect(engineA.sync() == .synced)
        let b = MemoryDevice("workstation")
        b.putHost("mine", #"{"address":"192.0.2.1"}"#)
        return b
    }

    func engine(_ team: PostgresTeam, _ b: MemoryDevice, _ backend: SyncBackend? = nil) throws -> SyncEngine {
        try SyncEngine(backend: backend ?? team.backend(user: "bob", device: b.name), local: b, store: b, clock: { 0 })
    }

    /// Every host of the vault with its value, bob's own, nothing pending, no conflict.
    func expectComplete(_ team: PostgresTeam, _ b: MemoryDevice, _ label: String) throws {
        let engineB = try engine(team, b)
        #expect(engineB.sync() == .synced, "\(label)")
        let held = try b.all().count
        #expect(held == Self.count + 1, "\(label): \(held) records")
        for i in stride(from: 0, to: Self.count, by: 97) {
            #expect(b.host("h\(i)") == #"{"address":"10.0.\#(i / 256).\#(i % 256)"}"#, "\(label): h\(i)")
        }
        #expect(b.host("mine") != nil, "\(label)")
        let status = try engineB.status()
        #expect(status.conflicts == 0 && status.pending == 0 && status.quarantined == 0, "\(label): \(status)")
        let conflicts = try engineB.conflicts().map(\.reason)
        #expect(conflicts.isEmpty, "\(label): \(conflicts)")
        // bob's own host reached the vault: a third device gets all of them.
        let c = MemoryDevice("phone")
        #expect(try SyncEngine(backend: team.backend(user: "carol", device: c.name), local: c, store: c, clock: { 0 }).sync() == .synced)
        let third = try c.all().count
        #expect(third == Self.count + 1, "\(label): the third device has \(third)")
    }

    /// The connection lost before the 2nd, 4th, 6th, 8th and 10th page (of ten), each in a
    /// fresh team; the device then killed (a new engine) and synced again.
    @Test(arguments: [2, 4, 6, 8, 10])
    func aFirstDownloadCutAtAnyPageEndsWithEveryRecord(page: Int) throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let b = try vault(team)
        let cut = CutBackend(team.backend(user: "bob", device: b.name), at: [page]) { () throws(SyncBackendError) in
            throw SyncBackendError.unavailable("connection lost (test)")
        }
        guard case .failed = try engine(team, b, cut).sync() else {
            Issue.record("the cut sync did not fail")
            return
        }
        #expect(try b.all().count > 1 && b.all().count < Self.count + 1, "cut before page \(page): part of the vault arrived")
        try expectComplete(team, b, "cut before page \(page)")
    }

    /// Cut twice (before the 3rd page, then again 4 pages into the resumed download), by a
    /// server restart each time: the server goes down in the middle of the download.
    @Test func aFirstDownloadCutTwiceByServerRestartsEndsWithEveryRecord() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let b = try vault(team)
        let stop: () throws(SyncBackendError) -> Void = { team.server.stop() }
        guard case .failed = try engine(team, b, CutBackend(team.backend(user: "bob", device: b.name), at: [3], cut: stop)).sync() else {
            Issue.record("the first cut sync did not fail")
            return
        }
        try team.server.restart()
        guard case .failed = try engine(team, b, CutBackend(team.backend(user: "bob", device: b.name), at: [4], cut: stop)).sync() else {
            Issue.record("the second cut sync did not fail")
            return
        }
        #expect(try b.all().count < Self.count + 1, "the second cut left the download unfinished")
        try team.server.restart()
        try expectComplete(team, b, "two server restarts")
    }
}
