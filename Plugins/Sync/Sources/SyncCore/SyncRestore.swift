import Foundation

/// History and restore: the versions the vault still holds, and bringing one back.
///
/// A restore is an ordinary local change: the chosen version is written to the owner's store
/// (its device-local fields kept from the local copy, as for any remote version) and sent at
/// the next sync over the vault's current version, so it reaches every device the way an
/// edit would, and a device that changed the record meanwhile merges it or gets a conflict.
/// A version from the vault is untrusted like any other: it meets every rule an incoming
/// version meets (size, key, device-local fields, the owner's check) before it is written.
extension SyncEngine {
    /// The versions the vault holds of `id` (of every record when nil), newest first.
    public func history(of id: SyncRecordID?, limit: Int) throws -> [SyncHistoryEntry] {
        do throws(SyncBackendError) {
            _ = try backend.open(device: state.device)
            return try backend.history(of: id, limit: limit)
        } catch {
            throw named(error)
        }
    }

    /// Writes version `number` of `id` (without one: the newest version that is not a deletion,
    /// for a record the vault holds as deleted) as a local change, to be sent by the next sync.
    /// Returns the version restored. Throws, with nothing written, when there is no such
    /// version, when it is a deletion or damaged or breaks a rule, or when the record has a
    /// change of this device's not yet synced or an open conflict (the restore would hide it).
    @discardableResult
    public func restore(_ named: SyncRecordID, number: Int64?) throws -> SyncHistoryEntry {
        let id = try record(named)
        try loadRules()
        guard let rule = rule(id) else {
            throw SyncEngineError("\(id) is not in a collection this device syncs (its plugin is not enabled here)")
        }
        try capture()
        if try pendingChange(id) != nil || openConflict(id) != nil {
            throw SyncEngineError("\(id) has a change on this device that is not synced yet: run 'termhost sync now' "
                                  + "(and resolve its conflict, 'termhost sync conflicts'), then restore")
        }
        let versions = try history(of: id, limit: SyncEngine.maxRestoreHistory)
        guard let current = versions.first else {
            throw SyncEngineError("the vault holds no version of \(id): it was never synced, or 'termhost sync purge' dropped it")
        }
        // Sent over a version this device has not seen, the restore would also replace what
        // arrived with it, unseen: a write of this device's that another displaced, say.
        if let known = try recordState(id)?.version, known != current.version.token {
            throw SyncEngineError("this device has not synced the vault's current version of \(id) yet: run 'termhost sync now', then restore")
        }
        let target: SyncHistoryEntry
        if let number {
            guard let found = versions.first(where: { $0.number == number }) else {
                throw SyncEngineError("the vault holds no version \(number) of \(id); 'termhost sync history \(id.collection)/\(id.key)' lists those it holds")
            }
            target = found
        } else {
            guard current.isDeletion else {
                throw SyncEngineError("\(id) is not deleted; name the version to go back to with --version N "
                                      + "('termhost sync history \(id.collection)/\(id.key)' lists them)")
            }
            guard let found = versions.first(where: { $0.payload != nil }) else {
                throw SyncEngineError("the vault holds no version of \(id) from before it was deleted")
            }
            target = found
        }
        if let damage = target.damage { throw SyncEngineError("version \(target.number) of \(id) cannot be restored: \(damage)") }
        guard let payload = target.payload else {
            throw SyncEngineError("version \(target.number) of \(id) is its deletion; restore a version from before it")
        }
        if payload == current.payload { throw SyncEngineError("version \(target.number) of \(id) is what the vault holds now: nothing to restore") }
        let asIncoming = SyncServerRecord(id: id, version: target.version, payload: payload, changeID: target.changeID, device: target.device)
        if let why = try SyncEngine.refusal(of: asIncoming) ?? ruleBreak(id, payload: payload, rule: rule) {
            throw SyncEngineError("version \(target.number) of \(id) \(why)")
        }
        if rule.merge == .fields, FieldMerge.object(payload) == nil {
            throw SyncEngineError("version \(target.number) of \(id) is not a JSON object, which collection \(id.collection) needs: refused")
        }
        try store.transaction {
            try local.apply(id, payload: FieldMerge.keepLocal(payload, from: try local.read(id), rule.localFields))
            // Sent over the vault's current version: the restore replaces it, like an edit.
            var known = try recordState(id) ?? RecordState()
            known.version = current.version.token
            known.base = current.payload.map { Data($0) }
            try store.put("records", StateKey.of(id), try encode(known))
            try store.put("outbox", StateKey.of(id), try encode(PendingChange(changeID: newChangeID())))
        }
        return target
    }

    /// `id` itself, or, when the vault holds no version under that key, the one record of its
    /// collection a version of which has `"name": id.key`: records keyed by an ID (a
    /// forwarding rule) are named by their name. Throws when several records had that name.
    public func record(_ id: SyncRecordID) throws -> SyncRecordID {
        guard try history(of: id, limit: 1).isEmpty else { return id }
        let named = Set(try history(of: nil, limit: SyncEngine.maxRestoreHistory).filter {
            $0.id.namespace == id.namespace && $0.id.collection == id.collection
                && $0.payload.flatMap(FieldMerge.object)?["name"] as? String == id.key
        }.map(\.id))
        if named.count > 1 {
            throw SyncEngineError("\(named.count) records of \(id.namespace)/\(id.collection) were named \(id.key.debugDescription): "
                                  + "name one by its key (\(named.map(\.key).sorted().joined(separator: ", ")))")
        }
        return named.first ?? id
    }

    /// The most versions of one record a restore looks through.
    public static let maxRestoreHistory = 100_000
}

/// What a version changed, compared with the record's version before it.
public enum SyncHistoryChange: Equatable, Sendable {
    case deleted
    /// The first version the vault holds (earlier ones were never written, or purged).
    case saved
    /// Written over a deletion: the record came back.
    case created
    /// The top-level fields that differ (empty when the record is not a JSON object).
    case changed([String])
    case unchanged
    case damaged(String)

    /// `entry` against `previous`, the same record's version just before it (nil: none held).
    public init(_ entry: SyncHistoryEntry, previous: SyncHistoryEntry?) {
        if let damage = entry.damage { self = .damaged(damage); return }
        guard let now = entry.payload else { self = .deleted; return }
        guard let previous, previous.damage == nil else { self = .saved; return }
        guard let before = previous.payload else { self = .created; return }
        if before == now { self = .unchanged; return }
        guard let a = FieldMerge.object(before), let b = FieldMerge.object(now) else { self = .changed([]); return }
        let fields = Set(a.keys).union(b.keys).filter { FieldMerge.canonical(a[$0]) != FieldMerge.canonical(b[$0]) }
        self = .changed(fields.sorted())
    }

    /// One word for scripts: deleted, saved, created, changed, unchanged, damaged.
    public var kind: String {
        switch self {
        case .deleted: return "deleted"
        case .saved: return "saved"
        case .created: return "created"
        case .changed: return "changed"
        case .unchanged: return "unchanged"
        case .damaged: return "damaged"
        }
    }

    public var fields: [String] { if case .changed(let f) = self { return f } else { return [] } }
}
