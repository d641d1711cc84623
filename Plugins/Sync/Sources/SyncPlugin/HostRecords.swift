import CTermhost
import SyncCore
import TermhostSDK

/// The engine's view of the device's records: termhost.sync-store/1.
final class HostRecords: SyncLocalRecords {
    let sync: SyncStore

    init(_ sync: SyncStore) { self.sync = sync }

    func collections() throws -> [SyncCollection] {
        try sync.collections().map {
            SyncCollection(namespace: $0.namespace, collection: $0.collection, merge: $0.merge == .fields ? .fields : .record, localFields: $0.localFields)
        }
    }

    func changes(after: Int64) throws -> (ids: [SyncRecordID], last: Int64) {
        let rows = try sync.journal(after: after)
        return (rows.map { SyncRecordID(namespace: $0.namespace, collection: $0.collection, key: $0.key) }, rows.last?.sequence ?? after)
    }

    func all() throws -> [SyncRecordID] {
        try collections().flatMap { c in
            try sync.keys(c.namespace, c.collection).map { SyncRecordID(namespace: c.namespace, collection: c.collection, key: $0) }
        }
    }

    func read(_ id: SyncRecordID) throws -> [UInt8]? { try sync.get(id.namespace, id.collection, id.key) }

    func apply(_ id: SyncRecordID, payload: [UInt8]?) throws { try sync.apply(id.namespace, id.collection, id.key, payload) }

    func refusal(_ id: SyncRecordID, payload: [UInt8]) throws -> String? {
        try sync.refusal(id.namespace, id.collection, id.key, payload)
    }
}

/// The engine's own state: collections of this plugin's store namespace.
final class PluginState: SyncStateStore {
    let store: Store

    init(_ store: Store) { self.store = store }

    func get(_ collection: String, _ key: String) throws -> [UInt8]? { try store.get(collection, key) }
    func put(_ collection: String, _ key: String, _ value: [UInt8]) throws { try store.put(collection, key, value) }
    func remove(_ collection: String, _ key: String) throws {
        do { try store.remove(collection, key) } catch where error.code == Int32(TERMHOST_ERR_NOT_FOUND) {}
    }
    func list(_ collection: String) throws -> [(key: String, value: [UInt8])] { try store.list(collection) }
    func transaction(_ body: () throws -> Void) throws { try store.transaction(body) }
}
