import Foundation
import TermhostRegistry
import TermhostServices

/// The host's synced user settings in the store (`SyncedSettings`): declared syncable by the
/// host itself, field by field, so the sync provider carries them like any plugin's collection.
/// Only what `termhost settings set` wrote or a peer sent is here: never the operator's policy,
/// never a secret.
public enum SyncedSettingsStore {
    /// TERMHOST_SYNC_MERGE_FIELDS: two devices setting different keys of one feature both keep theirs.
    static let mergeFields: Int32 = 2

    static func declare(_ syncables: SyncableCollections) {
        _ = syncables.declare(namespace: SyncedSettings.namespace, collection: SyncedSettings.collection,
                              merge: mergeFields, localFields: [])
    }

    /// The layer as stored; a store that does not exist yet holds none, and one that cannot be
    /// read is reported and contributes nothing.
    public static func load(storePath: String) -> SyncedSettings {
        guard storePath != ":memory:", FileManager.default.fileExists(atPath: storePath) else { return SyncedSettings() }
        do throws(StoreError) {
            let store = try SQLiteStore(path: storePath)
            var records: [(key: String, value: [UInt8])] = []
            try store.list(namespace: SyncedSettings.namespace, collection: SyncedSettings.collection, prefix: "") { key, value in
                records.append((key, value))
                return true
            }
            return SyncedSettings.decode(records)
        } catch {
            return SyncedSettings(rejected: [.unreadableFile(file: storePath, reason: "\(SyncedSettings.source): \(error.message)")])
        }
    }

    /// Sets (value non-nil) or removes one key of a feature's record.
    public static func write(_ store: SQLiteStore, feature: FeatureID, key: String, value: JSONValue?) throws(StoreError) {
        let current = try store.get(namespace: SyncedSettings.namespace, collection: SyncedSettings.collection, key: feature.rawValue)
        let object = current.flatMap { SyncedSettings.decode([(feature.rawValue, $0)]).settings[feature.rawValue] } ?? [:]
        if let bytes = SyncedSettings.record(object, setting: key, to: value) {
            try store.put(namespace: SyncedSettings.namespace, collection: SyncedSettings.collection, key: feature.rawValue, value: bytes)
        } else {
            try store.remove(namespace: SyncedSettings.namespace, collection: SyncedSettings.collection, key: feature.rawValue)
        }
    }
}
