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

    private func fail(_ message: String, remedy: String?) -> SyncOutcome {
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
    private func joinVault(_ vault: String) throws {
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
    private func pull(restored: Bool) throws {
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
    private func startFullPull() throws {
        try store.transaction {
            try clearReconcileMarks()
            state.cursor = ""
            state.fullReconcile = true
            state.fullPullSawDamage = nil
            try saveState()
        }
    }

    private func clearReconcileMarks() throws {
        for (key, _) in try store.list("reconcile") { try store.remove("reconcile", key) }
    }

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

    private func receive(_ record: SyncServerRecord, restored: Bool) throws {
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
    private func refusedByRules(_ id: SyncRecordID, version: SyncVersion, payload: [UInt8], rule: SyncCollection) throws -> Bool {
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
    private func passOver(_ id: SyncRecordID, version: SyncVersion) throws {
        var known = try recordState(id) ?? RecordState()
        known.version = version.token
        try store.put("records", StateKey.of(id), try encode(known))
    }

    private func mergeOrConflict(_ id: SyncRecordID, base: [UInt8]?, local localValue: [UInt8]?, remote: SyncServerRecord, rule: SyncCollection) throws {
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

    private func conflict(_ id: SyncRecordID, base: [UInt8]?, local: [UInt8]?, remote: SyncServerRecord, reason: String) throws {
        let c = SyncConflict(conflictID: StateKey.conflictID(id), id: id, reason: reason, local: local.map { Data($0) },
                             remote: remote.payload.map { Data($0) }, remoteVersion: remote.version.token, base: base.map { Data($0) })
        try store.put("conflicts", c.conflictID, try encode(c))
        try store.remove("outbox", StateKey.of(id))
    }

    /// Sends pending changes once; returns whether a merge left new ones to send. Appends the
    /// versions the vault gave this device's writes to `written`.
    private func push(_ written: inout [SyncVersion]) throws -> Bool {
        let pending = try outbox()
        guard !pending.isEmpty else { return false }
        var again = false
        for start in stride(from: 0, to: pending.count, by: 500) {
            let batch = Array(pending[start..<min(pending.count, start + 500)])
            var changes: [SyncChange] = []
            for (id, change) in batch {
                let payload: [UInt8]?
                if rule(id) == nil {
                    payload = try store.get("foreign", StateKey.of(id)).flatMap { try? JSONDecoder().decode(ForeignRecord.self, from: Data($0)) }?.payload.map { [UInt8]($0) }
                } else {
                    payload = try strippedLocal(id)
                }
                let base = try recordState(id)?.version.map(SyncVersion.init)
                changes.append(SyncChange(changeID: change.changeID, id: id, base: base, payload: payload))
            }
            let results = try backend.push(changes, device: state.device)
            guard results.count == changes.count else { throw SyncBackendError.invalid("the backend answered \(results.count) results for \(changes.count) changes") }
            try store.transaction {
                for ((id, pendingChange), (change, result)) in zip(batch, zip(changes, results)) {
                    switch result {
                    case .applied(let version):
                        written.append(version)
                        try accepted(id, change: change.changeID, version: version, payload: change.payload, pending: pendingChange)
                    case .conflict(let server):
                        if pendingChange.all.contains(server.changeID) {
                            written.append(server.version)
                            try accepted(id, change: server.changeID, version: server.version, payload: server.payload, pending: pendingChange)
                        } else if let rule = rule(id), let payload = server.payload,
                                  try refusedByRules(id, version: server.version, payload: payload, rule: rule) {
                            again = true   // stays pending; sent again over the refused version
                            continue
                        } else if let rule = rule(id) {
                            try mergeOrConflict(id, base: try recordState(id)?.base.map { [UInt8]($0) }, local: change.payload, remote: server, rule: rule)
                            again = true
                        }
                    }
                }
                try saveState()
            }
        }
        return again
    }

    /// The backend stored `change` as `version`: it is the new synced copy. The pending entry
    /// goes only if the local value is still what was sent.
    private func accepted(_ id: SyncRecordID, change: String, version: SyncVersion, payload: [UInt8]?, pending: PendingChange) throws {
        var known = try recordState(id) ?? RecordState()
        known.ancestor = known.base
        known.version = version.token
        known.base = payload.map { Data($0) }
        try store.put("records", StateKey.of(id), try encode(known))
        state.lastOwnChange = change
        let current = rule(id) == nil ? payload : try strippedLocal(id)
        if current == payload {
            try store.remove("outbox", StateKey.of(id))
        } else {
            var next = pending
            next.earlier = Array(pending.all.prefix(8))
            next.changeID = newChangeID()
            try store.put("outbox", StateKey.of(id), try encode(next))
        }
    }

    // MARK: - Commands

    public func status() throws -> SyncStatus {
        SyncStatus(backend: backend.summary, device: state.device, vault: state.vault, lastSuccess: state.lastSuccess,
                   pending: try store.list("outbox").count, conflicts: try store.list("conflicts").count,
                   quarantined: try store.list("quarantine").count, lastError: state.lastError, paused: state.paused)
    }

    public func conflicts() throws -> [SyncConflict] {
        try store.list("conflicts").compactMap { try? JSONDecoder().decode(SyncConflict.self, from: Data($0.value)) }
            .sorted { $0.id < $1.id }
    }

    public func quarantined() throws -> [SyncQuarantined] {
        try store.list("quarantine").compactMap { try? JSONDecoder().decode(SyncQuarantined.self, from: Data($0.value)) }
    }

    public enum Side: String, Sendable { case local, remote }

    /// Resolves a conflict: `local` keeps this device's value of what both sides changed (in a
    /// collection merged field by field, the other side's changes to other fields are kept too;
    /// otherwise the whole local record) and sends it at the next sync, which pulls first: a
    /// version newer than the conflict's is merged again, and only a new clash is a conflict
    /// again. `remote` takes the other's value here. Throws when there is no such conflict.
    public func resolve(_ conflictID: String, keep side: Side) throws {
        guard let bytes = try store.get("conflicts", conflictID),
              let c = try? JSONDecoder().decode(SyncConflict.self, from: Data(bytes)) else {
            throw SyncEngineError("no conflict \(conflictID.debugDescription); 'termhost sync conflicts' lists them")
        }
        try loadRules()
        try store.transaction {
            var known = try recordState(c.id) ?? RecordState()
            known.version = c.remoteVersion
            known.base = c.remote
            switch side {
            case .local:
                if let rule = rule(c.id), rule.merge == .fields, let mine = try strippedLocal(c.id), let theirs = c.remote,
                   let merged = FieldMerge.mergeKeepingLocal(base: c.base.map { [UInt8]($0) }, local: mine, remote: [UInt8](theirs)) {
                    if let why = try local.refusal(c.id, payload: merged) {
                        throw SyncEngineError("keeping this device's fields over the other device's record breaks a rule of \(c.id.namespace): \(why); "
                                              + "edit the record so it holds, or keep the remote version")
                    }
                    try local.apply(c.id, payload: FieldMerge.keepLocal(merged, from: try local.read(c.id), rule.localFields))
                }
                try store.put("records", StateKey.of(c.id), try encode(known))
                try store.put("outbox", StateKey.of(c.id), try encode(PendingChange(changeID: newChangeID())))
            case .remote:
                let payload = c.remote.map { FieldMerge.keepLocal([UInt8]($0), from: try? local.read(c.id), rule(c.id)?.localFields ?? []) }
                try local.apply(c.id, payload: payload)
                try store.put("records", StateKey.of(c.id), try encode(known))
                try store.remove("outbox", StateKey.of(c.id))
            }
            try store.remove("conflicts", conflictID)
        }
    }

    /// Purges the vault's tombstones that every device has passed; with `force`, all of them
    /// (devices behind then reconcile in full). Returns how many went.
    public func purge(force: Bool) throws -> Int {
        do throws(SyncBackendError) {
            _ = try backend.open(device: state.device)
            return try backend.purgeTombstones(force: force)
        } catch {
            throw named(error)
        }
    }

    /// A backend's failure, named once as a failed sync names it: the vault, what went wrong, what to do.
    func named(_ error: SyncBackendError) -> SyncEngineError {
        SyncEngineError("\(backend.summary): \(error.message)" + (SyncEngine.remedy(error).map { "; \($0)" } ?? ""))
    }

    public func setPaused(_ paused: Bool) throws {
        state.paused = paused
        try saveState()
    }

    /// The records this device has changed and not yet sent (what a read-only vault refuses).
    public func pendingChanges() throws -> [SyncRecordID] {
        try loadRules()
        try capture()   // edits made since the last sync count too
        return try outbox().map(\.0).sorted()
    }

    /// Drops the pending changes: each record goes back to the copy last synced with the vault
    /// (device-local fields kept), or away when the vault never had it, and nothing is left to
    /// send. For a device whose role may only read the vault: without it, every sync would
    /// fail on the same refused changes. Returns what was dropped.
    @discardableResult
    public func discardLocal() throws -> [SyncRecordID] {
        let dropped = try pendingChanges()
        try store.transaction {
            for id in dropped {
                let synced = try recordState(id)?.base.map { [UInt8]($0) }
                if let rule = rule(id) {
                    try local.apply(id, payload: synced.map { FieldMerge.keepLocal($0, from: try local.read(id), rule.localFields) })
                }
                try store.remove("outbox", StateKey.of(id))
            }
        }
        return dropped
    }

    /// Forgets the cursor and the server versions: the next sync pulls everything and merges it
    /// with the local records (nothing local is deleted by a reset itself).
    public func reset() throws {
        state.vault = nil
        try saveState()
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

    private func outbox() throws -> [(SyncRecordID, PendingChange)] {
        try store.list("outbox").compactMap { entry in
            guard let parts = try? JSONDecoder().decode([String].self, from: Data(entry.key.utf8)), parts.count == 3,
                  let change = try? JSONDecoder().decode(PendingChange.self, from: Data(entry.value)) else { return nil }
            return (SyncRecordID(namespace: parts[0], collection: parts[1], key: parts[2]), change)
        }
    }

    private func quarantine(_ damage: SyncDamage) throws {
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
