import Foundation

/// Design (CKSyncEngine's model, on any `SyncBackend`):
///   1. Capture: journal rows of syncable collections since the last capture become pending
///      changes (record IDs and a change ID; the bytes are read when sent). A row whose value
///      equals the last synced copy is an applied remote change, not a local one.
///   2. Fetch before send: pull from the stored cursor; each remote record is applied, merged
///      with a pending local edit field by field, or listed as a conflict. A cursor older than
///      the vault's tombstone fence means a full pull: afterwards a local record the vault once
///      had (it has a server version) but no longer knows was deleted and purged; it is removed
///      here, never uploaded again as new. Only records the vault never saw are uploaded.
///   3. Send: pending changes with the version they replace. A stale one comes back with the
///      backend's record and goes through the same merge. A pending change is cleared only if
///      the local value is still the one acknowledged (CKSyncEngine's "which batch" lesson).
///   4. Move the cursor past what this push wrote when the backend can tell nothing else lies
///      between (`SyncBackend.cursor(_:skippingOwn:device:)`), so the next pull does not fetch
///      this device's own uploads back; acknowledge it so the backend may purge tombstones.
/// Order comes from the backend's versions only; `clock` is read for "last success" display.
/// A store restored from an old backup is recognised because the backend knows a newer change
/// from this device than the store does: in that sync, peers' deletes of records the store
/// still holds become conflicts instead of deleting them.
/// Not thread-safe: one engine runs one sync at a time (the Sync plugin serialises them).
public final class SyncEngine {
    let backend: SyncBackend
    let local: SyncLocalRecords
    let store: SyncStateStore
    let clock: () -> Double
    var rules: [String: SyncCollection] = [:]
    var state: EngineState
    /// Records the last sync's pull returned (its own uploads are not among them when the
    /// backend could skip them): what the tests and the benchmark count.
    public private(set) var recordsPulled = 0

    public init(backend: SyncBackend, local: SyncLocalRecords, store: SyncStateStore, clock: @escaping () -> Double) throws {
        self.backend = backend
        self.local = local
        self.store = store
        self.clock = clock
        if let bytes = try store.get("engine", "state"), let saved = try? JSONDecoder().decode(EngineState.self, from: Data(bytes)) {
            state = saved
        } else {
            // A device ID is random, never derived from the host name (clones must differ).
            state = EngineState(device: UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())
            try store.put("engine", "state", Array(try JSONEncoder().encode(state)))
        }
    }

    public var device: String { state.device }

    // MARK: - One sync

    /// Runs one sync. Never throws: a failure is recorded for `status` (with what to do) and
    /// everything pending stays pending.
    @discardableResult
    public func sync() -> SyncOutcome {
        if state.paused { return .paused }
        do {
            try run()
            state.lastSuccess = clock()
            state.lastError = nil
            try saveState()
            return .synced
        } catch let error as SyncBackendError {
            return fail("\(backend.summary): \(error.message)", remedy: SyncEngine.remedy(error))
        } catch {
            return fail("\(error)", remedy: "check the local store ('termhost doctor'); the next sync tries again")
        }
    }

    func fail(_ message: String, remedy: String?) -> SyncOutcome {
        state.lastError = remedy.map { "\(message); \($0)" } ?? message
        try? saveState()
        return .failed(state.lastError!)
    }

    /// What to do, for errors whose message does not already say it. A refusal's message does
    /// (only the backend knows whether the password, the role or the membership is at fault).
    static func remedy(_ error: SyncBackendError) -> String? {
        switch error {
        case .unavailable: return "nothing is lost: changes stay pending and the next sync retries; check that the vault is reachable"
        case .denied: return nil
        case .invalid: return "fix the vault or its settings ('termhost sync backend show')"
        case .cursorExpired: return "the next sync reconciles in full"
        }
    }

    func run() throws {
        try loadRules()
        // Before the vault is reached: when it cannot be, the outbox still holds (and status
        // counts) every local change waiting for it.
        try capture()
        let info = try backend.open(device: state.device)
        if state.vault != info.vaultID {
            try joinVault(info.vaultID)
        }
        let lastOwn = try backend.lastChangeID(device: state.device)
        let pendingIDs = Set(try outbox().flatMap { $0.1.all })
        let restored = lastOwn != nil && lastOwn != state.lastOwnChange && !pendingIDs.contains(lastOwn!)
        try pull(restored: restored)
        if restored { state.lastOwnChange = lastOwn }
        var written: [SyncVersion] = []
        for _ in 0..<3 where try push(&written) {}
        let cursor = backend.cursor(SyncCursor(state.cursor), skippingOwn: written, device: state.device)
        if cursor.token != state.cursor {
            state.cursor = cursor.token
            try saveState()
        }
        try backend.acknowledge(device: state.device, cursor: SyncCursor(state.cursor))
    }

    /// A first sync, or the vault was replaced: forget server versions, pull everything, and
    /// offer every local record (merged against what the vault has).
    func joinVault(_ vault: String) throws {
        try store.transaction {
            for (key, _) in try store.list("records") { try store.remove("records", key) }
            for id in try local.all() where rule(id) != nil {
                try store.put("outbox", StateKey.of(id), try encode(PendingChange(changeID: newChangeID())))
            }
            try clearReconcileMarks()
            state.vault = vault
            state.cursor = ""
            state.fullReconcile = true
            try saveState()
        }
    }

    func capture() throws {
        let (ids, last) = try local.changes(after: state.journalSequence)
        try store.transaction {
            for id in Set(ids) where rule(id) != nil {
                if try store.get("conflicts", StateKey.conflictID(id)) != nil { continue }
                let current = try strippedLocal(id)
                let known = try recordState(id)
                if current == known?.base.map({ [UInt8]($0) }) {
                    try store.remove("outbox", StateKey.of(id))
                } else {
                    var pending = try pendingChange(id) ?? PendingChange(changeID: newChangeID())
                    if try store.get("outbox", StateKey.of(id)) != nil {
                        pending.earlier = Array(([pending.changeID] + pending.earlier).prefix(8))
                        pending.changeID = newChangeID()
                    }
                    try store.put("outbox", StateKey.of(id), try encode(pending))
                }
            }
            state.journalSequence = max(state.journalSequence, last)
            try saveState()
        }
    }

    /// Pulls from the stored cursor. A full pull (first sync, a new vault, an expired cursor)
    /// ends by telling which local records the vault no longer knows, which needs every record
    /// the pull returned: each page marks its records in the "reconcile" collection in the
    /// same transaction that saves the cursor past them, so a pull cut anywhere (server
    /// restarted, network gone, process killed) resumes where it stopped with the marks of the
    /// pages already applied, and nothing saved is untrue without the rest of the pull.
    func pull(restored: Bool) throws {
        var cursor = SyncCursor(state.cursor)
        if cursor == .start && !state.fullReconcile {
            try startFullPull()
        }
        recordsPulled = 0
        while true {
            let result = Result { () throws(SyncBackendError) in try backend.pull(after: cursor, limit: 500) }
            if case .failure(.cursorExpired) = result {
                try startFullPull()
                cursor = .start
                continue
            }
            let page = try result.get()
            recordsPulled += page.records.count
            try store.transaction {
                for damage in page.damaged { try quarantine(damage) }
                // Damage names no record for sure: which local records it hid is unknown, so this
                // full pull must not take any unseen record for deleted (flag saved with the page).
                if state.fullReconcile && !page.damaged.isEmpty { state.fullPullSawDamage = true }
                for record in page.records {
                    if state.fullReconcile { try store.put("reconcile", StateKey.of(record.id), [1]) }
                    try receive(record, restored: restored)
                }
                state.cursor = page.next.token
                try saveState()
            }
            cursor = page.next
            if !page.more { break }
        }
        guard state.fullReconcile else { return }
        try store.transaction {
            for id in try local.all() where rule(id) != nil {
                if try store.get("reconcile", StateKey.of(id)) != nil { continue }
                guard let known = try recordState(id), known.version != nil else {
                    if try pendingChange(id) == nil {
                        try store.put("outbox", StateKey.of(id), try encode(PendingChange(changeID: newChangeID())))
                    }
                    continue
                }
                // The vault had it and has forgotten even its tombstone: it was deleted and purged.
                if try pendingChange(id) != nil || restored {
                    try conflict(id, base: known.base.map { [UInt8]($0) }, local: try strippedLocal(id), remote: .purged(id),
                                 reason: "deleted on another device (and purged) while changed or restored here")
                } else if state.fullPullSawDamage != true {
                    try local.apply(id, payload: nil)
                    try store.remove("records", StateKey.of(id))
                }
            }
            try clearReconcileMarks()
            state.fullReconcile = false
            state.fullPullSawDamage = nil
            try saveState()
        }
    }

    /// Begins a full pull from the start of the feed: no record marked as seen yet.
    func startFullPull() throws {
        try store.transaction {
            try clearReconcileMarks()
            state.cursor = ""
            state.fullReconcile = true
            state.fullPullSawDamage = nil
            try saveState()
        }
    }

    func clearReconcileMarks() throws {
        for (key, _) in try store.list("reconcile") { try store.remove("reconcile", key) }
    }

    // MARK: - State plumbing

    func rule(_ id: SyncRecordID) -> SyncCollection? { rules[SyncEngine.ruleKey(id.namespace, id.collection)] }

    /// The declared collections, read again for every sync or resolve (a plugin may declare more).
    func loadRules() throws {
        rules = Dictionary(try local.collections().map { (SyncEngine.ruleKey($0.namespace, $0.collection), $0) }, uniquingKeysWith: { a, _ in a })
    }

    private static func ruleKey(_ namespace: String, _ collection: String) -> String { "\(namespace)\u{0}\(collection)" }

    func strippedLocal(_ id: SyncRecordID) throws -> [UInt8]? {
        FieldMerge.strip(try local.read(id), rule(id)?.localFields ?? [])
    }

    func recordState(_ id: SyncRecordID) throws -> RecordState? {
        try store.get("records", StateKey.of(id)).flatMap { try? JSONDecoder().decode(RecordState.self, from: Data($0)) }
    }

    func openConflict(_ id: SyncRecordID) throws -> SyncConflict? {
        try store.get("conflicts", StateKey.conflictID(id)).flatMap { try? JSONDecoder().decode(SyncConflict.self, from: Data($0)) }
    }

    func pendingChange(_ id: SyncRecordID) throws -> PendingChange? {
        try store.get("outbox", StateKey.of(id)).flatMap { try? JSONDecoder().decode(PendingChange.self, from: Data($0)) }
    }

    func outbox() throws -> [(SyncRecordID, PendingChange)] {
        try store.list("outbox").compactMap { entry in
            guard let parts = try? JSONDecoder().decode([String].self, from: Data(entry.key.utf8)), parts.count == 3,
                  let change = try? JSONDecoder().decode(PendingChange.self, from: Data(entry.value)) else { return nil }
            return (SyncRecordID(namespace: parts[0], collection: parts[1], key: parts[2]), change)
        }
    }

    func quarantine(_ damage: SyncDamage) throws {
        let item = SyncQuarantined(location: damage.location, reason: damage.reason, raw: Data(damage.raw))
        try store.put("quarantine", damage.location, try encode(item))
    }

    func saveState() throws { try store.put("engine", "state", try encode(state)) }

    func encode<T: Encodable>(_ value: T) throws -> [UInt8] { Array(try JSONEncoder().encode(value)) }

    func newChangeID() -> String { UUID().uuidString.lowercased() }
}

public enum SyncOutcome: Equatable, Sendable {
    case synced
    case paused
    case failed(String)
}

public struct SyncStatus: Equatable, Sendable {
    public let backend: String
    public let device: String
    public let vault: String?
    /// This device's clock when the last sync succeeded: for display only.
    public let lastSuccess: Double?
    public let pending: Int
    public let conflicts: Int
    public let quarantined: Int
    /// What failed last, and what to do about it.
    public let lastError: String?
    public let paused: Bool
}

public struct SyncEngineError: Error, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}