import CTermhost
import Synchronization

/// The collections plugins declared syncable in this process (termhost_host_store_t.
/// declare_syncable), which are all termhost.sync-store/1 lets the sync provider reach.
/// Declarations live as long as the process: every process initialises every plugin, so each
/// has the full set before a command runs.
public final class SyncableCollections: Sendable {
    public struct Declaration: Hashable, Sendable {
        public let namespace: String
        public let collection: String
        /// termhost_sync_merge: 1 record, 2 fields.
        public let merge: Int32
        public let localFields: [String]
    }

    /// An owner's check of another device's version (store.h, termhost_sync_check): the plugin's
    /// function and the pointer it asked to get back, valid for the process.
    public struct Check: @unchecked Sendable {
        public let function: termhost_sync_check
        public let user: UnsafeMutableRawPointer?
        public init(function: termhost_sync_check, user: UnsafeMutableRawPointer?) {
            self.function = function
            self.user = user
        }
    }

    private let declared = Mutex<[String: Declaration]>([:])
    private let checks = Mutex<[String: Check]>([:])

    public init() {}

    /// Records a declaration; a second one for the same collection replaces the first.
    /// Returns why it is refused, or nil.
    public func declare(namespace: String, collection: String, merge: Int32, localFields: [String]) -> String? {
        guard merge == 1 || merge == 2 else { return "merge must be TERMHOST_SYNC_MERGE_RECORD (1) or TERMHOST_SYNC_MERGE_FIELDS (2), not \(merge)" }
        if !localFields.isEmpty && merge != 2 {
            return "device-local fields need TERMHOST_SYNC_MERGE_FIELDS: only JSON objects have fields to strip"
        }
        if localFields.contains(where: { $0.isEmpty }) { return "local_fields has an empty field name" }
        let d = Declaration(namespace: namespace, collection: collection, merge: merge, localFields: localFields)
        declared.withLock { $0[SyncableCollections.key(namespace, collection)] = d }
        return nil
    }

    /// Names the owner's check for a declared collection; returns why it is refused, or nil.
    public func declareCheck(namespace: String, collection: String, _ check: Check) -> String? {
        guard declaration(namespace: namespace, collection: collection) != nil else {
            return "collection '\(collection)' is not declared syncable (declare_syncable first)"
        }
        checks.withLock { $0[SyncableCollections.key(namespace, collection)] = check }
        return nil
    }

    public func check(namespace: String, collection: String) -> Check? {
        checks.withLock { $0[SyncableCollections.key(namespace, collection)] }
    }

    public func declaration(namespace: String, collection: String) -> Declaration? {
        declared.withLock { $0[SyncableCollections.key(namespace, collection)] }
    }

    public var all: [Declaration] {
        declared.withLock { Array($0.values) }.sorted { ($0.namespace, $0.collection) < ($1.namespace, $1.collection) }
    }

    private static func key(_ namespace: String, _ collection: String) -> String { namespace + "\u{0}" + collection }
}
