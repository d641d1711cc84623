/// What one sync sent and applied, counted at the engine's two edges (the backend it pushes to,
/// the records it applies) so that the engine itself keeps no counters for display.
final class SyncTally {
    var sent = 0
    var applied = 0
}

/// A backend that counts the changes it accepted; everything else passes through.
final class TalliedBackend: SyncBackend {
    let inner: SyncBackend
    let tally: SyncTally

    init(_ inner: SyncBackend, _ tally: SyncTally) {
        self.inner = inner
        self.tally = tally
    }

    var summary: String { inner.summary }
    func open(device: String) throws(SyncBackendError) -> SyncVaultInfo { try inner.open(device: device) }
    func pull(after cursor: SyncCursor, limit: Int) throws(SyncBackendError) -> SyncPage { try inner.pull(after: cursor, limit: limit) }
    func push(_ changes: [SyncChange], device: String) throws(SyncBackendError) -> [SyncPushResult] {
        let results = try inner.push(changes, device: device)
        tally.sent += results.filter { if case .applied = $0 { true } else { false } }.count
        return results
    }
    func lastChangeID(device: String) throws(SyncBackendError) -> String? { try inner.lastChangeID(device: device) }
    func cursor(_ cursor: SyncCursor, skippingOwn versions: [SyncVersion], device: String) -> SyncCursor {
        inner.cursor(cursor, skippingOwn: versions, device: device)
    }
    func acknowledge(device: String, cursor: SyncCursor) throws(SyncBackendError) { try inner.acknowledge(device: device, cursor: cursor) }
    func purgeTombstones(force: Bool) throws(SyncBackendError) -> Int { try inner.purgeTombstones(force: force) }
    func waitForChanges(after cursor: SyncCursor, seconds: Double) -> Bool { inner.waitForChanges(after: cursor, seconds: seconds) }
    func history(of id: SyncRecordID?, limit: Int) throws(SyncBackendError) -> [SyncHistoryEntry] { try inner.history(of: id, limit: limit) }
    /// The loop keeps the real backend open between syncs.
    func close() {}
}

/// The device's records, counting the remote versions applied to them.
final class TalliedRecords: SyncLocalRecords {
    let inner: SyncLocalRecords
    let tally: SyncTally

    init(_ inner: SyncLocalRecords, _ tally: SyncTally) {
        self.inner = inner
        self.tally = tally
    }

    func collections() throws -> [SyncCollection] { try inner.collections() }
    func changes(after: Int64) throws -> (ids: [SyncRecordID], last: Int64) { try inner.changes(after: after) }
    func all() throws -> [SyncRecordID] { try inner.all() }
    func read(_ id: SyncRecordID) throws -> [UInt8]? { try inner.read(id) }
    func apply(_ id: SyncRecordID, payload: [UInt8]?) throws {
        try inner.apply(id, payload: payload)
        tally.applied += 1
    }
    func refusal(_ id: SyncRecordID, payload: [UInt8]) throws -> String? { try inner.refusal(id, payload: payload) }
}
