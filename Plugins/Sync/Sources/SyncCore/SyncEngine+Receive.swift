import Foundation

/// Step 2 of a sync (see SyncEngine): what a version from the vault does here. Refused unread
/// or by its owner's rules (quarantined), applied, merged field by field with a pending local
/// edit, or a conflict for the user.
extension SyncEngine {
    /// The most bytes one record may hold, and its key. Checked before anything decodes the
    /// record: a peer's 140 MB record once cost a device 0.9 GB of memory and left 490 MB in
    /// its store. A host, rule or monitor is a few hundred bytes.
    public static let maxRecordBytes = 1 << 20
    public static let maxKeyBytes = 512

    /// Why a record from the vault is refused before it is decoded, or nil: too large, or a
    /// key no local command could have made or could reach (empty, ".", "..", control
    /// characters, too long). The owning plugin's own rules for the fields are its to check.
    static func refusal(of record: SyncServerRecord) -> String? {
        if let payload = record.payload, payload.count > maxRecordBytes {
            return "is \(payload.count) bytes, more than the \(maxRecordBytes) a record may hold: refused unread"
        }
        let key = record.id.key
        if key.isEmpty || key == "." || key == ".." { return "has the key \(key.debugDescription), which names nothing: refused" }
        if key.utf8.count > maxKeyBytes { return "has a key of \(key.utf8.count) bytes, more than \(maxKeyBytes): refused" }
        if key.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) }) {
            return "has a key with control characters: refused"
        }
        return nil
    }

    func receive(_ record: SyncServerRecord, restored: Bool) throws {
        if let why = SyncEngine.refusal(of: record) {
            try passOver(record.id, version: record.version)
            try quarantine(SyncDamage(location: "\(backend.summary): \(record.id) version \(record.version)", reason: why,
                                      raw: Array((record.payload ?? []).prefix(4096))))
            return
        }
        let key = StateKey.of(record.id)
        guard let rule = rule(record.id) else {
            // A collection this device does not have (a newer client's): kept untouched.
            try store.put("foreign", key, try encode(ForeignRecord(id: record.id, version: record.version.token, payload: record.payload.map { Data($0) })))
            return
        }
        if let payload = record.payload, rule.merge == .fields, FieldMerge.object(payload) == nil {
            try quarantine(SyncDamage(location: "\(backend.summary): \(record.id) version \(record.version)",
                                      reason: "collection \(rule.collection) merges field by field but this record is not a JSON object", raw: payload))
            return
        }
        if let payload = record.payload, try refusedByRules(record.id, version: record.version, payload: payload, rule: rule) {
            return
        }
        var known = try recordState(record.id) ?? RecordState()
        let pending = try pendingChange(record.id)
        if let pending, pending.all.contains(record.changeID) {
            // Our own write (its acknowledgement was lost, or it was sent by an earlier run).
            try accepted(record.id, change: record.changeID, version: record.version, payload: record.payload, pending: pending)
            return
        }
        if known.version == record.version.token { return }
        if let mine = record.displaced.first(where: { $0.device == state.device && $0.version.token == known.version }),
           mine.payload != record.payload {
            // Our accepted write lost to a concurrent one: merge it as if it had been rejected.
            try mergeOrConflict(record.id, base: known.ancestor.map { [UInt8]($0) }, local: mine.payload, remote: record, rule: rule)
            return
        }
        if let open = try openConflict(record.id) {
            // Merged from the copy the conflict was found against, so a newer remote version
            // that no longer clashes ends the conflict and one that does replaces its remote side.
            try mergeOrConflict(record.id, base: open.base.map { [UInt8]($0) }, local: try strippedLocal(record.id), remote: record, rule: rule)
            return
        }
        if pending != nil {
            try mergeOrConflict(record.id, base: known.base.map { [UInt8]($0) }, local: try strippedLocal(record.id), remote: record, rule: rule)
            return
        }
        if record.payload == nil {
            if restored, try local.read(record.id) != nil {
                try conflict(record.id, base: known.base.map { [UInt8]($0) }, local: try strippedLocal(record.id), remote: record,
                             reason: "deleted on another device after the backup this store was restored from")
                return
            }
            try local.apply(record.id, payload: nil)
            try store.remove("records", key)
            return
        }
        try local.apply(record.id, payload: FieldMerge.keepLocal(record.payload!, from: try local.read(record.id), rule.localFields))
        known.version = record.version.token
        known.base = Data(record.payload!)
        try store.put("records", key, try encode(known))
    }

    /// A version another device wrote is refused whole and quarantined, named in `sync status`,
    /// when it carries device-local fields (IDs of stored secrets, above all: no device sends
    /// them, so one that does is hostile or broken, and applying the rest of it would still bind
    /// this device's secrets to someone else's host), or when its owning plugin's rules refuse it
    /// (what its `add` checks: a host named "..", a port of 2^63). True when refused.
    func refusedByRules(_ id: SyncRecordID, version: SyncVersion, payload: [UInt8], rule: SyncCollection) throws -> Bool {
        guard let why = try ruleBreak(id, payload: payload, rule: rule) else { return false }
        try passOver(id, version: version)
        try quarantine(SyncDamage(location: "\(backend.summary): \(id) version \(version)", reason: why, raw: Array(payload.prefix(4096))))
        return true
    }

    /// Why a version is refused by the rules every incoming version meets (see above), or nil.
    func ruleBreak(_ id: SyncRecordID, payload: [UInt8], rule: SyncCollection) throws -> String? {
        if payload.count > SyncEngine.maxRecordBytes {   // a conflict's server copy comes this way, unchecked before
            return "is \(payload.count) bytes, more than the \(SyncEngine.maxRecordBytes) a record may hold: refused unread"
        }
        if case let carried = FieldMerge.carriedLocalFields(payload, rule.localFields), !carried.isEmpty {
            return "carries \(carried.joined(separator: ", ")), which stays on each device and no device sends (a secret's ID names this device's secrets only): refused"
        }
        if let broken = try local.refusal(id, payload: payload) { return "breaks a rule of \(id.namespace): \(broken): refused" }
        return nil
    }

    /// A refused version is not applied, but it is the vault's current one: the local copy
    /// stays as it is, and a local change is sent over it (base = that version), so an honest
    /// edit replaces a hostile copy instead of conflicting with it forever.
    func passOver(_ id: SyncRecordID, version: SyncVersion) throws {
        var known = try recordState(id) ?? RecordState()
        known.version = version.token
        try store.put("records", StateKey.of(id), try encode(known))
    }

    func mergeOrConflict(_ id: SyncRecordID, base: [UInt8]?, local localValue: [UInt8]?, remote: SyncServerRecord, rule: SyncCollection) throws {
        var known = try recordState(id) ?? RecordState()
        if localValue == remote.payload {
            known.version = remote.version.token
            known.base = remote.payload.map { Data($0) }
            try store.put("records", StateKey.of(id), try encode(known))
            try store.remove("outbox", StateKey.of(id))
            try store.remove("conflicts", StateKey.conflictID(id))
            return
        }
        // A merge is a record neither device wrote: it meets the owner's rules too (each side
        // did alone, but a rule across fields may refuse the mix); refused, it is a conflict.
        var mergeRefusal: String?
        if rule.merge == .fields, let l = localValue, let r = remote.payload,
           case .success(let merged) = FieldMerge.merge(base: base, local: l, remote: r) {
            mergeRefusal = try local.refusal(id, payload: merged)
        }
        if mergeRefusal == nil, rule.merge == .fields, let l = localValue, let r = remote.payload,
           case .success(let merged) = FieldMerge.merge(base: base, local: l, remote: r) {
            try local.apply(id, payload: FieldMerge.keepLocal(merged, from: try local.read(id), rule.localFields))
            known.version = remote.version.token
            known.base = Data(r)
            try store.put("records", StateKey.of(id), try encode(known))
            var pending = try pendingChange(id) ?? PendingChange(changeID: newChangeID())
            pending.earlier = Array(pending.all.prefix(8))
            pending.changeID = newChangeID()
            try store.put("outbox", StateKey.of(id), try encode(pending))
            try store.remove("conflicts", StateKey.conflictID(id))
            return
        }
        let reason: String
        switch (localValue, remote.payload) {
        case _ where mergeRefusal != nil:
            reason = "the two devices' changes together break a rule of \(id.namespace): \(mergeRefusal!)"
        case (nil, _): reason = "deleted here, changed on another device"
        case (_, nil): reason = "changed here, deleted on another device"
        default:
            if rule.merge == .fields, let l = localValue, let r = remote.payload,
               case .failure(let clash) = FieldMerge.merge(base: base, local: l, remote: r) {
                reason = "both devices changed \(clash.fields.joined(separator: ", "))"
            } else {
                reason = "changed on both devices"
            }
        }
        try conflict(id, base: base, local: localValue, remote: remote, reason: reason)
    }

    func conflict(_ id: SyncRecordID, base: [UInt8]?, local: [UInt8]?, remote: SyncServerRecord, reason: String) throws {
        let c = SyncConflict(conflictID: StateKey.conflictID(id), id: id, reason: reason, local: local.map { Data($0) },
                             remote: remote.payload.map { Data($0) }, remoteVersion: remote.version.token, base: base.map { Data($0) })
        try store.put("conflicts", c.conflictID, try encode(c))
        try store.remove("outbox", StateKey.of(id))
    }

    /// Sends pending changes once; returns whether a merge left new ones to send. Appends the
}
