import Foundation

/// The engine's persisted records (JSON values in the Sync plugin's store collections).
/// Collections: "engine" (one value, "state"), "records" (per-record server version and the
/// last synced copy), "outbox" (pending change IDs only: the payload is read when sent),
/// "conflicts", "quarantine", "foreign" (records of collections this device does not know),
/// "reconcile" (records a full pull in progress has received, saved with its cursor).
struct EngineState: Codable {
    var device: String
    var vault: String?
    var cursor: String = ""
    var journalSequence: Int64 = 0
    var lastOwnChange: String?
    /// Display only: never compared with another device's clock.
    var lastSuccess: Double?
    var lastError: String?
    var paused = false
    var fullReconcile = false
    /// A page of the full pull in progress held damage (a record whose ID is unknown): no
    /// unseen local record may then be taken for deleted at its end.
    var fullPullSawDamage: Bool? = nil   // optional: a state saved before it decodes
}

struct RecordState: Codable {
    var version: String?
    /// The record as last synced (device-local fields stripped): the merge base.
    var base: Data?
    /// The synced copy before this device's last accepted write, for merging a displaced write.
    var ancestor: Data?
}

struct PendingChange: Codable {
    var changeID: String
    /// Change IDs this record was sent with before (a lost acknowledgement comes back as one).
    var earlier: [String] = []
    var all: [String] { [changeID] + earlier }
}

/// A record both sides changed in ways the engine cannot merge; `termhost sync resolve`.
public struct SyncConflict: Codable, Equatable, Sendable {
    public let conflictID: String
    public let id: SyncRecordID
    public let reason: String
    public let local: Data?
    public let remote: Data?
    public let remoteVersion: String
    /// The copy both sides last agreed on (device-local fields stripped), from which the local
    /// side's changes are told apart when it is kept; nil when there was none.
    public let base: Data?
}

/// Backend bytes that did not decode: kept, never applied, never re-uploaded.
public struct SyncQuarantined: Codable, Equatable, Sendable {
    public let location: String
    public let reason: String
    public let raw: Data
}

struct ForeignRecord: Codable {
    var id: SyncRecordID
    var version: String
    var payload: Data?
}

enum StateKey {
    /// Store keys for record IDs: JSON of the three parts, reversible and free of separators.
    static func of(_ id: SyncRecordID) -> String {
        String(decoding: (try? JSONEncoder().encode([id.namespace, id.collection, id.key])) ?? Data(), as: UTF8.self)
    }

    /// A short stable name for a conflict (FNV-1a of the record key), what the user types.
    static func conflictID(_ id: SyncRecordID) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in of(id).utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return String(String(h, radix: 16).suffix(10))
    }
}
