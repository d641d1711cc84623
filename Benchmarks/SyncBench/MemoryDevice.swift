import Foundation
import SyncCore

/// A device's records and engine state in memory, so the figures are the engine's and the
/// backend's, not a store's. Thread-safe: the benchmark reads a device another thread syncs.
final class MemoryRecords: SyncLocalRecords, @unchecked Sendable {
    private let lock = NSLock()
    private var values: [SyncRecordID: [UInt8]] = [:]
    private var journal: [(Int64, SyncRecordID)] = []
    private var sequence: Int64 = 0
    /// Called after a remote value is written, with the record and its new bytes.
    var onApply: (@Sendable (SyncRecordID, [UInt8]?) -> Void)?

    static let hosts = SyncCollection(namespace: "org.termhost.ssh", collection: "hosts", merge: .fields)

    func collections() -> [SyncCollection] { [MemoryRecords.hosts] }

    func changes(after: Int64) -> (ids: [SyncRecordID], last: Int64) {
        lock.lock(); defer { lock.unlock() }
        let rows = journal.filter { $0.0 > after }
        return (rows.map(\.1), rows.last?.0 ?? after)
    }

    func all() -> [SyncRecordID] {
        lock.lock(); defer { lock.unlock() }
        return Array(values.keys)
    }

    func read(_ id: SyncRecordID) -> [UInt8]? {
        lock.lock(); defer { lock.unlock() }
        return values[id]
    }

    func apply(_ id: SyncRecordID, payload: [UInt8]?) {
        write(id, payload)
        onApply?(id, payload)
    }

    /// A local edit, as a plugin's store write would journal it.
    func write(_ id: SyncRecordID, _ payload: [UInt8]?) {
        lock.lock(); defer { lock.unlock() }
        values[id] = payload
        sequence += 1
        journal.append((sequence, id))
    }

    var count: Int {
        lock.lock(); defer { lock.unlock() }
        return values.count
    }
}

final class MemoryState: SyncStateStore {
    private var collections: [String: [String: [UInt8]]] = [:]
    func get(_ collection: String, _ key: String) -> [UInt8]? { collections[collection]?[key] }
    func put(_ collection: String, _ key: String, _ value: [UInt8]) { collections[collection, default: [:]][key] = value }
    func remove(_ collection: String, _ key: String) { collections[collection]?[key] = nil }
    func list(_ collection: String) -> [(key: String, value: [UInt8])] { (collections[collection] ?? [:]).map { ($0.key, $0.value) } }
    func transaction(_ body: () throws -> Void) throws { try body() }
}

/// A host record as the SSH plugin stores one: a JSON object of a few hundred bytes.
func hostRecord(_ i: Int, revision: Int = 0) -> [UInt8] {
    Array(#"{"name":"host-\#(i)","hostname":"10.\#(i / 65536).\#((i / 256) % 256).\#(i % 256)","port":22,"user":"deploy","identity":"team-key","jump":"bastion","tags":["bench","rev-\#(revision)"]}"#.utf8)
}
