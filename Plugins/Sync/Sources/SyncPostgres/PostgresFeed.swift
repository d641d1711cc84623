// The fuzz target compiles this file together with SyncBackend.swift in one module.
#if canImport(SyncCore)
import SyncCore
#endif

/// What the server sends back, read as untrusted text: the rows of `pull` and `push`, the
/// NOTIFY payload, cursors and hexadecimal bodies. Pure Swift, so the fuzz target
/// (Tests/Fuzz/PostgresFeedFuzz.swift) runs it on any bytes. A row that breaks the schema's
/// promises (order, types) is refused as `.invalid`; a body that fails its digest, is not
/// hexadecimal or is too large is damage, kept for quarantine.
enum PostgresFeed {
    /// The largest record body accepted, either way.
    static let maxPayload = 1 << 20
    /// Bodies one history answer holds at most (the version that passes it included): the
    /// newest 64 MiB of versions, far more than any real record's history.
    static let historyBytes = 64 << 20
    /// What the pull and push queries send instead of a body over `maxPayload`, followed by its
    /// size in bytes ("oversize:3145728"): never hexadecimal, so never taken for a body.
    static let oversizeMarker = "oversize:"

    /// One page of `termhost_sync.pull`: seq, namespace, collection, key, body (hex), intact,
    /// change_id, device.
    static func page(_ rows: [[String?]], after: Int64, limit: Int, vault: String) throws(SyncBackendError) -> SyncPage {
        var records: [SyncServerRecord] = [], damaged: [SyncDamage] = []
        var last = after
        for row in rows {
            guard row.count == 8, let seqText = row[0], let seq = Int64(seqText), seq > last,
                  let namespace = row[1], let collection = row[2], let key = row[3] else {
                throw .invalid("the server's vault feed is not in sequence order after \(last): is the schema another program's?")
            }
            last = seq
            let id = SyncRecordID(namespace: namespace, collection: collection, key: key)
            let location = "vault '\(vault)' record \(id) version \(seq)"
            let hexBody = row[4]
            if let size = oversize(hexBody) {
                damaged.append(SyncDamage(location: location, reason: "its body is \(size) bytes, more than the \(maxPayload) a record may hold: refused unread", raw: []))
                continue
            }
            let body = hexBody.flatMap(bytes(hex:))
            if row[5] != "t" {
                damaged.append(SyncDamage(location: location, reason: "its body does not match the SHA-256 the server stored with it (changed outside Termhost)",
                                          raw: body ?? Array((hexBody ?? "").utf8)))
            } else if let hexBody, body == nil {
                damaged.append(SyncDamage(location: location, reason: "its body is not hexadecimal", raw: Array(hexBody.utf8)))
            } else if let body, body.count > maxPayload {
                damaged.append(SyncDamage(location: location, reason: "its body is larger than 1 MiB", raw: body))
            } else {
                records.append(SyncServerRecord(id: id, version: SyncVersion(String(seq)), payload: body,
                                                changeID: row[6] ?? "", device: row[7] ?? ""))
            }
        }
        return SyncPage(records: records, damaged: damaged, next: SyncCursor(String(last)), more: rows.count == limit)
    }

    /// The rows of `termhost_sync.push`, one per change in order: idx, applied, seq, body (hex,
    /// the server's record on a conflict), change_id, device.
    static func pushResults(_ rows: [[String?]], changes: [SyncChange]) throws(SyncBackendError) -> [SyncPushResult] {
        guard rows.count == changes.count else {
            throw .invalid("the server answered \(rows.count) results for \(changes.count) changes")
        }
        var results: [SyncPushResult] = []
        for (i, row) in rows.enumerated() {
            guard row.count == 6, row[0] == String(i), let seqText = row[2], let seq = Int64(seqText), seq >= 0 else {
                throw .invalid("the server's answer to change \(i) of a push is malformed")
            }
            if row[1] == "t" {
                results.append(.applied(SyncVersion(String(seq))))
            } else {
                // A server copy that cannot be read is a conflict all the same, marked so: the
                // device sets it aside and sends its change over it, and the rest of the push goes on.
                var unreadable: String?
                var body = row[3].flatMap(bytes(hex:))
                if let size = oversize(row[3]) {
                    unreadable = "is \(size) bytes, more than the \(maxPayload) a record may hold: refused unread"
                } else if (row[3] == nil) != (body == nil) || (body?.count ?? 0) > maxPayload {
                    unreadable = "is not a hexadecimal body of at most 1 MiB: refused"
                }
                if unreadable != nil { body = nil }
                results.append(.conflict(SyncServerRecord(id: changes[i].id, version: SyncVersion(String(seq)), payload: body,
                                                          changeID: row[4] ?? "", device: row[5] ?? "", unreadable: unreadable)))
            }
        }
        return results
    }

    /// The rows of `termhost_sync.history`, newest first: seq, namespace, collection, key, body
    /// (hex), intact, change_id, device, stored_at (seconds since 1970, or NULL). Rows must be
    /// in strictly falling sequence order, of `id` when one was asked for, at most `limit`; a
    /// body that fails its digest, is not hexadecimal or is too large is kept as a version with
    /// `damage`, never as one that could be restored.
    static func history(_ rows: [[String?]], of id: SyncRecordID?, limit: Int) throws(SyncBackendError) -> [SyncHistoryEntry] {
        guard rows.count <= limit else { throw .invalid("the server's history answered \(rows.count) versions for a limit of \(limit)") }
        var entries: [SyncHistoryEntry] = []
        var previous = Int64.max
        for row in rows {
            guard row.count == 9, let seqText = row[0], let seq = Int64(seqText), seq > 0, seq < previous,
                  let namespace = row[1], let collection = row[2], let key = row[3] else {
                throw .invalid("the server's vault history is not in sequence order: is the schema another program's?")
            }
            previous = seq
            let record = SyncRecordID(namespace: namespace, collection: collection, key: key)
            if let id, record != id { throw .invalid("the server's history of \(id) holds a version of another record") }
            var storedAt: Double?
            if let text = row[8] {
                guard let seconds = Double(text), seconds.isFinite, seconds >= 0, seconds < 1e11 else {
                    throw .invalid("the server's history has a time that is not a time")
                }
                storedAt = seconds
            }
            let hexBody = row[4]
            var payload: [UInt8]?, damage: String?
            if let size = oversize(hexBody) {
                damage = "its body is \(size) bytes, more than the \(maxPayload) a record may hold"
            } else if row[5] != "t" {
                damage = "its body does not match the SHA-256 the server stored with it (changed outside Termhost)"
            } else if let hexBody {
                if let body = bytes(hex: hexBody), body.count <= maxPayload { payload = body } else { damage = "its body is not hexadecimal of at most 1 MiB" }
            }
            entries.append(SyncHistoryEntry(id: record, number: seq, version: SyncVersion(String(seq)), payload: payload,
                                            changeID: row[6] ?? "", device: row[7] ?? "", storedAt: storedAt, damage: damage))
        }
        return entries
    }

    /// The size a body over the limit was replaced by (`oversizeMarker`), or nil.
    static func oversize(_ text: String?) -> Int64? {
        guard let text, text.hasPrefix(oversizeMarker) else { return nil }
        return Int64(text.dropFirst(oversizeMarker.count)).flatMap { $0 > Int64(maxPayload) ? $0 : nil } ?? Int64(maxPayload + 1)
    }

    /// The sequence a NOTIFY payload ("vault-id:sequence") announces for `vault`, or nil.
    static func notifiedSequence(_ payload: String, vault: String) -> Int64? {
        let parts = payload.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == vault, let seq = Int64(parts[1]), seq >= 0 else { return nil }
        return seq
    }

    /// A cursor's sequence number; a token this backend did not write means a full pull.
    static func sequence(_ cursor: SyncCursor) throws(SyncBackendError) -> Int64 {
        if cursor.token.isEmpty { return 0 }
        guard let n = Int64(cursor.token), n >= 0 else { throw .cursorExpired }
        return n
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// nil when `text` is not an even run of hexadecimal digits.
    static func bytes(hex text: String) -> [UInt8]? {
        let u = Array(text.utf8)
        guard u.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(u.count / 2)
        var i = 0
        while i < u.count {
            guard let hi = nibble(u[i]), let lo = nibble(u[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}
