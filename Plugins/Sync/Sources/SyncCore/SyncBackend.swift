/// Design: the contract between the sync engine and a vault backend (the folder, PostgreSQL).
///
/// A backend is a dumb, durable, ordered store of record versions; all merge logic lives in the
/// engine. It promises:
///   - Order without device clocks. Every accepted write gets a `SyncVersion` assigned by the
///     backend (a per-vault sequence for PostgreSQL; a Lamport stamp plus device and journal
///     position for the folder). The engine compares versions only for equality.
///   - A change feed: `pull(after:)` returns every record changed since an opaque `SyncCursor`,
///     the backend's own encoding (a sequence number, a per-device vector...), with its current
///     state: payload, or a tombstone (`payload == nil`). Pulling from `.start` returns the whole
///     vault (live records and the tombstones still kept).
///   - Optimistic concurrency: a change carries the version it replaces (`base`, nil for "I have
///     never seen this record"). When the record's current version differs, the change is not
///     applied and the result carries the backend's record, so the engine can merge.
///     A backend without an atomic compare-and-set (the folder) may accept two writes on one
///     base; it then picks one deterministically and reports the others in `displaced`, and the
///     engine treats its displaced write exactly as a rejected one.
///   - Idempotent pushes: a change ID seen before returns the result it got the first time, so a
///     retry after a lost acknowledgement never applies twice.
///   - Tombstones are purged only below a fence. A cursor from before the fence makes `pull`
///     throw `.cursorExpired`; the engine then pulls from `.start` (full reconciliation).
///   - Records it cannot decode are returned as `SyncDamage`, never dropped silently.
///   - A device does not read its own uploads back: `cursor(_:skippingOwn:device:)` moves a
///     cursor past the versions a push was just given, but only when nothing else can lie
///     between (another device's change committed meanwhile is still pulled).
///
/// Threading: a backend is used by one engine at a time, from one thread at a time; it may
/// block (network, fsync). It never sees a secret: the engine reads only syncable store records,
/// and the secrets service is not one.

/// A record's identity in the vault: the owning plugin's store namespace, the collection it
/// declared syncable, and the key.
public struct SyncRecordID: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    public let namespace: String
    public let collection: String
    public let key: String

    public init(namespace: String, collection: String, key: String) {
        self.namespace = namespace
        self.collection = collection
        self.key = key
    }

    public static func < (a: SyncRecordID, b: SyncRecordID) -> Bool {
        (a.namespace, a.collection, a.key) < (b.namespace, b.collection, b.key)
    }

    public var description: String { "\(namespace)/\(collection)/\(key)" }
}

/// A version the backend assigned to an accepted write. Opaque to the engine: compared for
/// equality only, never ordered and never derived from a clock.
public struct SyncVersion: Hashable, Codable, Sendable, CustomStringConvertible {
    public let token: String
    public init(_ token: String) { self.token = token }
    public var description: String { token }

    /// The version of a record the backend no longer has any trace of (its tombstone was purged).
    /// A conflict against such a record carries a tombstone with this version; a push whose base
    /// is `.purged` is a push of a record the backend does not know.
    public static let purged = SyncVersion("")
}

/// A position in the backend's change feed, in the backend's own encoding. The engine stores
/// it and hands it back; `.start` means "from the beginning".
public struct SyncCursor: Hashable, Codable, Sendable {
    public let token: String
    public init(_ token: String) { self.token = token }
    public static let start = SyncCursor("")
}

/// One outgoing change. The payload is read from the local store when the batch is built, so
/// the latest local value is what gets sent.
public struct SyncChange: Equatable, Sendable {
    /// Chosen by the engine once per outgoing change and kept across retries.
    public let changeID: String
    public let id: SyncRecordID
    /// The version this change replaces; nil when this device has never seen the record.
    public let base: SyncVersion?
    /// The record's bytes (device-local fields already stripped); nil deletes it (a tombstone).
    public let payload: [UInt8]?

    public init(changeID: String, id: SyncRecordID, base: SyncVersion?, payload: [UInt8]?) {
        self.changeID = changeID
        self.id = id
        self.base = base
        self.payload = payload
    }
}

/// A write that a backend without compare-and-set accepted but that lost to a concurrent one.
public struct SyncDisplacedWrite: Equatable, Sendable {
    public let version: SyncVersion
    public let changeID: String
    public let device: String
    public let payload: [UInt8]?

    public init(version: SyncVersion, changeID: String, device: String, payload: [UInt8]?) {
        self.version = version
        self.changeID = changeID
        self.device = device
        self.payload = payload
    }
}

/// A record as the backend holds it now.
public struct SyncServerRecord: Equatable, Sendable {
    public let id: SyncRecordID
    public let version: SyncVersion
    /// nil for a tombstone.
    public let payload: [UInt8]?
    /// The change that wrote this version, and the device that sent it.
    public let changeID: String
    public let device: String
    /// Concurrent writes that lost to this one (always empty on a compare-and-set backend).
    public let displaced: [SyncDisplacedWrite]
    /// Why the backend could not hand over this version's body (over the size limit, not what
    /// it should be): `payload` is then nil and means nothing. Only a push's conflict carries one.
    public let unreadable: String?

    public init(id: SyncRecordID, version: SyncVersion, payload: [UInt8]?, changeID: String, device: String,
                displaced: [SyncDisplacedWrite] = [], unreadable: String? = nil) {
        self.id = id
        self.version = version
        self.payload = payload
        self.changeID = changeID
        self.device = device
        self.displaced = displaced
        self.unreadable = unreadable
    }
}

extension SyncServerRecord {
    /// What a backend reports for a record it has no trace of.
    public static func purged(_ id: SyncRecordID) -> SyncServerRecord {
        SyncServerRecord(id: id, version: .purged, payload: nil, changeID: "", device: "")
    }
}

/// One version of a record the vault still holds (`termhost sync history`, `sync restore`).
/// Every write is kept, deletions included, until `termhost sync purge`, which keeps only
/// each live record's current version.
public struct SyncHistoryEntry: Equatable, Sendable {
    public let id: SyncRecordID
    /// What names this version in `restore --version N`. PostgreSQL: the vault's sequence
    /// number of the write. Folder: the version's place among the record's versions the folder
    /// holds, 1 the oldest (a folder has no sequence every device shares).
    public let number: Int64
    public let version: SyncVersion
    /// nil for a deletion, and for a version whose bytes are damaged (`damage` says why).
    public let payload: [UInt8]?
    public let changeID: String
    public let device: String
    /// When the server stored it, in seconds since 1970 by the server's one clock
    /// (PostgreSQL); nil for a folder, where only device clocks exist and none is trusted.
    public let storedAt: Double?
    /// Why this version cannot be used (changed outside Termhost, too large), or nil.
    public let damage: String?

    public init(id: SyncRecordID, number: Int64, version: SyncVersion, payload: [UInt8]?, changeID: String, device: String,
                storedAt: Double? = nil, damage: String? = nil) {
        self.id = id
        self.number = number
        self.version = version
        self.payload = payload
        self.changeID = changeID
        self.device = device
        self.storedAt = storedAt
        self.damage = damage
    }

    public var isDeletion: Bool { payload == nil && damage == nil }
}

/// Bytes in the backend that do not decode as a record: kept by the engine in quarantine with
/// the reason, never applied, never re-uploaded, never deleted by the engine.
public struct SyncDamage: Equatable, Sendable {
    /// Where it was found, in the backend's terms (a file path, a row's key).
    public let location: String
    public let reason: String
    public let raw: [UInt8]

    public init(location: String, reason: String, raw: [UInt8]) {
        self.location = location
        self.reason = reason
        self.raw = raw
    }
}

/// What `pull` returns: changed records, damage found, and the cursor to store once they are
/// applied. `more` asks for another pull from `next` at once.
public struct SyncPage: Equatable, Sendable {
    public let records: [SyncServerRecord]
    public let damaged: [SyncDamage]
    public let next: SyncCursor
    public let more: Bool

    public init(records: [SyncServerRecord], damaged: [SyncDamage], next: SyncCursor, more: Bool) {
        self.records = records
        self.damaged = damaged
        self.next = next
        self.more = more
    }
}

/// The outcome of one change of a push, in the order the changes were given.
public enum SyncPushResult: Equatable, Sendable {
    /// Stored (now, or by an earlier try with the same change ID) as this version.
    case applied(SyncVersion)
    /// Not stored: `base` was stale. Carries the backend's current record (maybe a tombstone).
    case conflict(SyncServerRecord)
}

/// What identifies a vault: a backend reset or replaced by another vault gets a new ID, and the
/// engine then reconciles from scratch.
public struct SyncVaultInfo: Equatable, Sendable {
    public let vaultID: String
    public init(vaultID: String) { self.vaultID = vaultID }
}

/// Why a backend call failed. `.unavailable` is retryable (the engine keeps everything pending
/// and tries again later); the others need someone to act, and `remedy` says what.
public enum SyncBackendError: Error, Equatable, Sendable {
    /// Network down, server restarting, folder not mounted, lock busy.
    case unavailable(String)
    /// The backend refused this user or device (removed from a team vault, wrong password);
    /// the message ends with what to do, which only the backend knows.
    case denied(String)
    /// The cursor is older than the tombstone fence: pull again from `.start`.
    case cursorExpired
    /// The backend's own data or configuration is unusable (newer format, bad settings).
    case invalid(String)

    public var message: String {
        switch self {
        case .unavailable(let m), .denied(let m), .invalid(let m): return m
        case .cursorExpired: return "the vault purged deletions this device had not yet seen; a full reconciliation is needed"
        }
    }

    public var isRetryable: Bool {
        switch self {
        case .unavailable, .cursorExpired: return true
        case .denied, .invalid: return false
        }
    }
}

/// A vault backend. See the design note at the top of this file.
public protocol SyncBackend: AnyObject {
    /// What `termhost sync status` shows, e.g. "folder /srv/vault" (never a password).
    var summary: String { get }

    /// Connects (or checks the folder) and identifies the vault, creating it when empty.
    func open(device: String) throws(SyncBackendError) -> SyncVaultInfo

    /// Records changed after `cursor`, at most about `limit` of them.
    /// Throws `.cursorExpired` when `cursor` is older than the tombstone fence.
    func pull(after cursor: SyncCursor, limit: Int) throws(SyncBackendError) -> SyncPage

    /// Applies changes, each independently, and returns one result per change, in order.
    /// A retried change ID returns its first result without applying it again.
    func push(_ changes: [SyncChange], device: String) throws(SyncBackendError) -> [SyncPushResult]

    /// The change ID of the newest change this device ID wrote to the vault, or nil. The engine
    /// compares it with its own state to tell a store restored from an old backup.
    func lastChangeID(device: String) throws(SyncBackendError) -> String?

    /// The cursor to keep after `device` pushed and was given `versions` (its `.applied` results):
    /// past them when they are exactly the entries of the change feed that follow `cursor`, so
    /// the next pull does not fetch them back; `cursor` itself when any other write (another
    /// device's, another process's) may lie between or after them. Never skips a write the
    /// caller did not make. Reads nothing from the vault.
    func cursor(_ cursor: SyncCursor, skippingOwn versions: [SyncVersion], device: String) -> SyncCursor

    /// Records that `device` has applied everything up to `cursor`, so tombstones every known
    /// device has passed may be purged.
    func acknowledge(device: String, cursor: SyncCursor) throws(SyncBackendError)

    /// Purges tombstones every known device has acknowledged; with `force`, all tombstones, which
    /// moves the fence past devices that have not caught up (they reconcile in full next time).
    /// Returns how many were purged.
    func purgeTombstones(force: Bool) throws(SyncBackendError) -> Int

    /// Waits up to `seconds` for a hint that the vault changed after `cursor` (PostgreSQL's
    /// NOTIFY). Only a hint: correctness comes from `pull`. Returns whether a hint arrived.
    func waitForChanges(after cursor: SyncCursor, seconds: Double) -> Bool

    /// The versions the vault holds of `id` (of every record when nil), newest first, in the
    /// vault's own order (never a device clock), at most `limit`. The newest version of a
    /// record is its current one.
    func history(of id: SyncRecordID?, limit: Int) throws(SyncBackendError) -> [SyncHistoryEntry]

    /// Releases connections and locks. Idempotent.
    func close()
}
