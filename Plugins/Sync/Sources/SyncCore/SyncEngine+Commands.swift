import Foundation

/// What `termhost sync` asks of the engine besides a sync: status, conflicts and their
/// resolution, purge, pause, the pending list and its discard, reset.
extension SyncEngine {
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
}
