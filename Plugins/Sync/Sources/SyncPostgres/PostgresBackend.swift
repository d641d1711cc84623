import Foundation
import SyncCore

/// Design: a vault in a PostgreSQL database, for a team that already runs one. The schema and
/// why writes are ordered by a per-vault sequence bumped inside the write transaction are in
/// `PostgresSchema`; this type maps the `SyncBackend` protocol onto its functions, one round
/// trip each: `open` connects, migrates when needed, opens (or creates) the vault and LISTENs;
/// `pull` and `push` are one statement per page or batch; versions and cursors are sequence
/// numbers written in decimal.
///
/// Connection loss (a restart, the network) is `.unavailable`: the connection is dropped and the
/// next call connects again. NOTIFY is only a wake-up hint, since a notification sent while this
/// client was disconnected is never delivered: after every (re)connect `waitForChanges` answers
/// true once, so the engine pulls from its cursor before it waits again. `waitForChanges` itself
/// never connects (a connect may block up to connect_timeout): a lost feed waits for a sync.
///
/// The password comes from the secrets service through the plugin; it is passed to libpq as a
/// keyword of its own and appears in no summary, message or log.
public final class PostgresBackend: SyncBackend {
    public let settings: PostgresSettings
    private let password: String?
    private var db: PGConnection?
    private var vaultID: String?
    private var device: String?
    /// Set by every (re)connect, cleared by a successful pull.
    private var needsPull = false

    /// Statements sent to the server since this backend was made, connection setup included
    /// (what the benchmark reports per sync).
    public private(set) var roundTrips = 0
    /// The largest record body the backend stores or accepts from the server.
    public static let maxPayload = PostgresFeed.maxPayload
    /// Changes per push statement.
    static let pushBatch = 500

    public init(settings: PostgresSettings, password: String?) {
        self.settings = settings
        self.password = password
    }

    deinit { close() }

    public var summary: String { settings.summary }

    public func open(device: String) throws(SyncBackendError) -> SyncVaultInfo {
        try settings.validate()
        self.device = device
        _ = try connection()
        guard let vaultID else { throw .invalid("vault '\(settings.vault)' did not open") }
        return SyncVaultInfo(vaultID: vaultID)
    }

    public func pull(after cursor: SyncCursor, limit: Int) throws(SyncBackendError) -> SyncPage {
        let after = try PostgresFeed.sequence(cursor)
        let limit = min(max(limit, 1), 10_000)
        // A body over the limit never crosses the wire: the server sends its size instead, so
        // one huge row cannot cost this device its memory before anything looks at it.
        let rows = try run("""
            SELECT seq, namespace, collection, key,
                   CASE WHEN length(body) > $4::integer THEN '\(PostgresFeed.oversizeMarker)' || (length(body) / 2)::text ELSE body END,
                   intact, change_id, device
            FROM termhost_sync.pull($1::uuid, $2::bigint, $3::integer)
            """, [try openVault(), String(after), String(limit), String(2 * PostgresFeed.maxPayload)])
        let page = try PostgresFeed.page(rows.rows, after: after, limit: limit, vault: settings.vault)
        needsPull = false
        return page
    }

    public func push(_ changes: [SyncChange], device: String) throws(SyncBackendError) -> [SyncPushResult] {
        var results: [SyncPushResult] = []
        var start = 0
        while start < changes.count {
            let batch = Array(changes[start..<min(start + PostgresBackend.pushBatch, changes.count)])
            results += try pushBatch(batch, device: device)
            start += batch.count
        }
        return results
    }

    private func pushBatch(_ changes: [SyncChange], device: String) throws(SyncBackendError) -> [SyncPushResult] {
        var list: [[String: Any]] = []
        for c in changes {
            if let p = c.payload, p.count > PostgresBackend.maxPayload {
                throw .invalid("record \(c.id) is \(p.count) bytes; a PostgreSQL vault takes at most 1 MiB per record")
            }
            // A base this backend did not write cannot match any row: the change comes back as a conflict.
            let base: Any
            if let v = c.base { base = Int64(v.token).map { $0 >= 0 ? String($0) : "-1" } ?? "-1" } else { base = NSNull() }
            list.append(["change": c.changeID, "namespace": c.id.namespace, "collection": c.id.collection, "key": c.id.key,
                         "base": base, "body": c.payload.map { PostgresFeed.hex($0) } ?? NSNull()])
        }
        guard let json = try? JSONSerialization.data(withJSONObject: list) else { throw .invalid("a change does not encode as JSON") }
        let rows = try run("""
            SELECT idx, applied, seq,
                   CASE WHEN length(body) > $4::integer THEN '\(PostgresFeed.oversizeMarker)' || (length(body) / 2)::text ELSE body END,
                   change_id, device
            FROM termhost_sync.push($1::uuid, $2, $3::jsonb)
            """, [try openVault(), device, String(decoding: json, as: UTF8.self), String(2 * PostgresFeed.maxPayload)])
        return try PostgresFeed.pushResults(rows.rows, changes: changes)
    }

    /// Writers hold the vault row's lock and number their changes from its sequence, so the
    /// numbers are dense and in commit order: those right after the cursor, without a gap, are
    /// this push's. Another device's change committed between leaves a gap and stays ahead.
    public func cursor(_ cursor: SyncCursor, skippingOwn versions: [SyncVersion], device: String) -> SyncCursor {
        guard let after = try? PostgresFeed.sequence(cursor) else { return cursor }
        let written = Set(versions.compactMap { Int64($0.token) })
        var last = after
        while written.contains(last + 1) { last += 1 }
        return last > after ? SyncCursor(String(last)) : cursor
    }

    public func lastChangeID(device: String) throws(SyncBackendError) -> String? {
        try run("SELECT termhost_sync.last_change_id($1::uuid, $2)", [try openVault(), device]).rows.first?.first ?? nil
    }

    public func acknowledge(device: String, cursor: SyncCursor) throws(SyncBackendError) {
        try run("SELECT termhost_sync.acknowledge($1::uuid, $2, $3::bigint)", [try openVault(), device, String(try PostgresFeed.sequence(cursor))])
    }

    public func purgeTombstones(force: Bool) throws(SyncBackendError) -> Int {
        let rows = try run("SELECT termhost_sync.purge_tombstones($1::uuid, $2::boolean)", [try openVault(), force ? "true" : "false"])
        return rows.rows.first?.first.flatMap { $0.flatMap { Int($0) } } ?? 0
    }

    /// Newest first, at most `limit` versions and about `PostgresFeed.historyBytes` of bodies
    /// (a member could fill the history with 100,000 versions of 1 MiB): the server stops at the
    /// version that passes the budget, so libpq never holds more.
    public func history(of id: SyncRecordID?, limit: Int) throws(SyncBackendError) -> [SyncHistoryEntry] {
        let limit = min(max(limit, 1), 100_000)
        let rows = try run("""
            SELECT seq, namespace, collection, key,
                   CASE WHEN length(body) > $6::integer THEN '\(PostgresFeed.oversizeMarker)' || (length(body) / 2)::text ELSE body END,
                   intact, change_id, device, stored_at
            FROM (SELECT h.*, sum(least(coalesce(length(h.body), 0), $6::integer)) OVER (ORDER BY h.seq DESC) AS before_and_this
                  FROM termhost_sync.history($1::uuid, $2, $3, $4, $5::integer) h) h
            WHERE before_and_this - least(coalesce(length(body), 0), $6::integer) < $7::bigint
            ORDER BY seq DESC
            """, [try openVault(), id?.namespace, id?.collection, id?.key, String(limit), String(2 * PostgresFeed.maxPayload),
                  String(2 * PostgresFeed.historyBytes)])
        return try PostgresFeed.history(rows.rows, of: id, limit: limit)
    }

    public func waitForChanges(after cursor: SyncCursor, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(max(0, seconds))
        guard let db, db.isOpen else {
            // The feed is dead: the next sync connects again (a connect here could block up to
            // connect_timeout, past a stop). Wait out the slice so a caller that loops does not spin.
            Thread.sleep(until: deadline)
            return false
        }
        if needsPull {
            // Reported once: a sync that is paused, or fails before its pull, must not be woken
            // again and again (the interval retries it).
            needsPull = false
            return true
        }
        let after = (try? PostgresFeed.sequence(cursor)) ?? 0
        while true {
            let (ok, notes) = db.notifications()
            guard ok else {
                self.db = nil
                return true   // the next call reconnects, and pulls
            }
            for note in notes where note.channel == PostgresSchema.channel {
                if let vaultID, let seq = PostgresFeed.notifiedSequence(note.payload, vault: vaultID), seq > after { return true }
            }
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return false }
            var fd = pollfd(fd: db.socket, events: Int16(POLLIN), revents: 0)
            _ = poll(&fd, 1, Int32(min(remaining, 3600) * 1000) + 1)
        }
    }

    public func close() {
        db = nil
    }

    // MARK: Team membership (owners only; the server checks)

    /// What a member may do: owners also manage members, editors write, readers only pull.
    public enum MemberAccess: String, Sendable {
        case owner, editor, reader
    }

    /// Gives PostgreSQL role `role` access to this vault (it must exist: the database's
    /// administrator creates each user's role).
    public func setMember(role: String, access: MemberAccess) throws(SyncBackendError) {
        try run("SELECT termhost_sync.set_member($1::uuid, $2, $3)", [try openVault(), role, access.rawValue])
    }

    /// Ends `role`'s access: its next sync fails with `.denied`.
    public func removeMember(role: String) throws(SyncBackendError) {
        try run("SELECT termhost_sync.remove_member($1::uuid, $2)", [try openVault(), role])
    }

    // MARK: Connection

    private func openVault() throws(SyncBackendError) -> String {
        _ = try connection()
        guard let vaultID else { throw .invalid("the PostgreSQL backend is used before open()") }
        return vaultID
    }

    /// The open connection, or a new one: connected, migrated, vault opened, listening.
    private func connection() throws(SyncBackendError) -> PGConnection {
        if let db, db.isOpen { return db }
        db = nil
        guard let device else { throw .invalid("the PostgreSQL backend is used before open()") }
        let fresh: PGConnection
        do {
            roundTrips += 1
            fresh = try PGConnection(parameters: settings.connectionParameters(password: password))
        } catch {
            throw PostgresConnectFailure.explain(error.message, settings: settings)
        }
        do {
            try PostgresSchema.migrate(fresh)
            roundTrips += 1
            let rows = try fresh.query("SELECT vault_id, access FROM termhost_sync.open_vault($1, $2)", [settings.vault, device])
            guard rows.count == 1, let id = rows[0, 0] else { throw PGError(message: "open_vault returned no vault", sqlState: nil, connectionLost: false) }
            roundTrips += 1
            try fresh.query("LISTEN " + PostgresSchema.channel)
            vaultID = id
        } catch let error as PGError {
            throw PostgresBackend.translate(error)
        } catch let error as SyncBackendError {
            throw error
        } catch {
            throw .invalid("\(error)")
        }
        db = fresh
        needsPull = true
        return fresh
    }

    /// Runs one of the schema's functions. When a connection that was open before this call
    /// turns out to be gone (the server restarted while the device was idle), it connects again
    /// and sends the statement once more: every function is safe to repeat (pull reads, push
    /// is idempotent by change ID, acknowledge only raises, purge and membership converge).
    @discardableResult
    private func run(_ sql: String, _ parameters: [String?]) throws(SyncBackendError) -> PGRows {
        var retried = false
        while true {
            let wasOpen = db != nil
            let db = try connection()
            roundTrips += 1
            do {
                return try db.query(sql, parameters)
            } catch {
                if error.connectionLost { self.db = nil }
                if error.connectionLost && wasOpen && !retried {
                    retried = true
                    continue
                }
                throw PostgresBackend.translate(error)
            }
        }
    }

    /// Maps a server error to the protocol's: connection trouble and transient server states are
    /// retryable; a refused membership says who to ask.
    static func translate(_ error: PGError) -> SyncBackendError {
        let state = error.sqlState ?? ""
        if error.connectionLost { return .unavailable(error.message) }
        if state == "TH001" { return .cursorExpired }
        if state == "42501" && error.message.contains("is registered to role") {
            return .denied("\(error.message); refused: a member syncs only under device IDs of its own")
        }
        if state == "42501" && error.message.contains("reader access") {
            return .denied("\(error.message): this role is read-only in the vault, so this device's changes cannot be sent; "
                           + "'termhost sync discard-local' lists and drops them so syncing goes on, or ask an owner for editor access")
        }
        if state == "42501" || state.hasPrefix("28") {
            return .denied("\(error.message); ask one of the vault's owners to add this role back, or choose another vault with 'termhost sync backend set'")
        }
        // Insufficient resources, transaction rollback (deadlock, serialization), lock not
        // available, operator intervention, system error: try again later.
        if ["53", "40", "55", "57", "58"].contains(String(state.prefix(2))) { return .unavailable(error.message) }
        return .invalid("\(error.message) (SQLSTATE \(state))")
    }
}
