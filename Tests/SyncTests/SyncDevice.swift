import Foundation
import SyncCore
import TermhostServices

/// One device in a test: its own SQLite store file (records of the "ssh" plugin's syncable
/// collections, and the Sync plugin's own state in namespace "org.termhost.sync"), an engine
/// over a real vault folder. Store namespaces and collections are the SSH plugin's.
final class SyncDevice: SyncLocalRecords, SyncStateStore {
    static let collections = [
        SyncCollection(namespace: "org.termhost.ssh", collection: "hosts", merge: .fields, localFields: ["lastUsed"]),
        SyncCollection(namespace: "org.termhost.forwarding", collection: "rules", merge: .record),
    ]
    let path: String
    var db: SQLiteStore
    var declared: [SyncCollection]
    var engine: SyncEngine!

    init(dir: String, folder: String, collections: [SyncCollection] = SyncDevice.collections,
         backend: SyncBackend? = nil, clock: @escaping () -> Double = { Date().timeIntervalSince1970 }) throws {
        path = "\(dir)/termhost.db"
        db = try SQLiteStore(path: path)
        declared = collections
        engine = try SyncEngine(backend: backend ?? FolderBackend(root: folder, create: true), local: self, store: self, clock: clock)
    }

    // The user's edits, as the owning plugin makes them.
    func putHost(_ key: String, _ json: String) throws {
        try db.put(namespace: "org.termhost.ssh", collection: "hosts", key: key, value: Array(json.utf8))
    }
    func host(_ key: String) throws -> [String: Any]? {
        try db.get(namespace: "org.termhost.ssh", collection: "hosts", key: key)
            .flatMap { try JSONSerialization.jsonObject(with: Data($0)) as? [String: Any] }
    }
    func deleteHost(_ key: String) throws {
        try db.remove(namespace: "org.termhost.ssh", collection: "hosts", key: key)
    }

    // SyncLocalRecords
    func collections() throws -> [SyncCollection] { declared }
    func changes(after: Int64) throws -> (ids: [SyncRecordID], last: Int64) {
        var ids: [SyncRecordID] = []
        var last = after
        try db.journal(after: after) { row in
            last = row.sequence
            ids.append(SyncRecordID(namespace: row.namespace, collection: row.collection, key: row.key))
            return true
        }
        return (ids, last)
    }
    func all() throws -> [SyncRecordID] {
        var ids: [SyncRecordID] = []
        for c in declared {
            try db.list(namespace: c.namespace, collection: c.collection, prefix: "") { key, _ in
                ids.append(SyncRecordID(namespace: c.namespace, collection: c.collection, key: key))
                return true
            }
        }
        return ids
    }
    func read(_ id: SyncRecordID) throws -> [UInt8]? { try db.get(namespace: id.namespace, collection: id.collection, key: id.key) }
    func apply(_ id: SyncRecordID, payload: [UInt8]?) throws {
        if let payload {
            try db.put(namespace: id.namespace, collection: id.collection, key: id.key, value: payload)
        } else {
            try db.remove(namespace: id.namespace, collection: id.collection, key: id.key)
        }
    }

    /// The owning plugin's check of another device's version, as a test sets it (none by default).
    var refuse: ((SyncRecordID, [UInt8]) -> String?)?
    func refusal(_ id: SyncRecordID, payload: [UInt8]) throws -> String? { refuse?(id, payload) }

    // SyncStateStore
    static let ns = "org.termhost.sync"
    func get(_ collection: String, _ key: String) throws -> [UInt8]? { try db.get(namespace: SyncDevice.ns, collection: collection, key: key) }
    func put(_ collection: String, _ key: String, _ value: [UInt8]) throws { try db.put(namespace: SyncDevice.ns, collection: collection, key: key, value: value) }
    func remove(_ collection: String, _ key: String) throws { try db.remove(namespace: SyncDevice.ns, collection: collection, key: key) }
    func list(_ collection: String) throws -> [(key: String, value: [UInt8])] {
        var out: [(key: String, value: [UInt8])] = []
        try db.list(namespace: SyncDevice.ns, collection: collection, prefix: "") { out.append((key: $0, value: $1)); return true }
        return out
    }
    func transaction(_ body: () throws -> Void) throws { try db.transaction(body) }
}

func temporaryDirectory(_ name: String) -> String {
    let dir = NSTemporaryDirectory() + "termhost-sync-\(name)-\(UUID().uuidString.prefix(8))"
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}
