import Foundation

/// Step 3 of a sync (see SyncEngine): sending the pending changes, and what each answer does.
extension SyncEngine {
    /// versions the vault gave this device's writes to `written`.
    func push(_ written: inout [SyncVersion]) throws -> Bool {
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
                        if pendingChange.all.contains(server.changeID) && server.unreadable == nil {
                            written.append(server.version)
                            try accepted(id, change: server.changeID, version: server.version, payload: server.payload, pending: pendingChange)
                        } else if let why = server.unreadable {
                            // Set aside like a version the rules refuse, and sent over next round.
                            try passOver(id, version: server.version)
                            try quarantine(SyncDamage(location: "\(backend.summary): \(id) version \(server.version)", reason: why, raw: []))
                            again = true
                            continue
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
    func accepted(_ id: SyncRecordID, change: String, version: SyncVersion, payload: [UInt8]?, pending: PendingChange) throws {
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
}
