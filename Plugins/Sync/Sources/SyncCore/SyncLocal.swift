/// How a syncable collection merges, as its owning plugin declares it.
public enum SyncMergeRule: String, Codable, Sendable {
    /// The whole record: the write the backend ordered last wins; a concurrent edit on another
    /// device is a conflict for the user.
    case record
    /// Records are JSON objects merged field by field against the last synced copy: edits to
    /// different fields both survive; the same field edited on both sides is a conflict.
    case fields
}

/// A collection a plugin declared syncable.
public struct SyncCollection: Hashable, Sendable {
    public let namespace: String
    public let collection: String
    public let merge: SyncMergeRule
    /// Top-level JSON fields that never leave the device (last used...): stripped before
    /// upload, kept from the local copy when a remote version is applied.
    public let localFields: [String]

    public init(namespace: String, collection: String, merge: SyncMergeRule, localFields: [String] = []) {
        self.namespace = namespace
        self.collection = collection
        self.merge = merge
        self.localFields = localFields
    }
}

/// The device's own records, as the engine sees them: other plugins' syncable collections and
/// their journal (the Sync plugin implements it over termhost.sync-store/1). Never the secrets.
public protocol SyncLocalRecords: AnyObject {
    /// The collections declared syncable.
    func collections() throws -> [SyncCollection]
    /// Records of syncable collections changed after journal sequence `after`, oldest first,
    /// and the newest sequence read.
    func changes(after: Int64) throws -> (ids: [SyncRecordID], last: Int64)
    /// Every record of the syncable collections.
    func all() throws -> [SyncRecordID]
    func read(_ id: SyncRecordID) throws -> [UInt8]?
    /// Writes a remote version (nil deletes). The owning plugin retires the record's runtime
    /// state (connections, forwards) before the new value is used.
    func apply(_ id: SyncRecordID, payload: [UInt8]?) throws
    /// Why the owning plugin refuses a version another device wrote (the rules its own `add`
    /// applies), or nil when it accepts it.
    func refusal(_ id: SyncRecordID, payload: [UInt8]) throws -> String?
}

extension SyncLocalRecords {
    /// Records whose owners check nothing (the engine's tests and benchmarks).
    public func refusal(_ id: SyncRecordID, payload: [UInt8]) throws -> String? { nil }
}

/// The engine's own persistent state: key/value collections of the Sync plugin's store
/// namespace, and transactions, so that a crash never leaves half an update.
public protocol SyncStateStore: AnyObject {
    func get(_ collection: String, _ key: String) throws -> [UInt8]?
    func put(_ collection: String, _ key: String, _ value: [UInt8]) throws
    func remove(_ collection: String, _ key: String) throws
    func list(_ collection: String) throws -> [(key: String, value: [UInt8])]
    func transaction(_ body: () throws -> Void) throws
}
