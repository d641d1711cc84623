import Foundation
import SyncCore

/// One device in memory: its records (the SSH plugin's hosts unless told otherwise), journaled
/// as the host store journals them, and the engine's own state. For the sync tests and the
/// benchmark that are about the engine and the backend, not about a store file (SyncTests'
/// SyncDevice has a real SQLite store).
///
/// Safe from several threads (a sync loop's and the test's): every access holds `lock`, which
/// is recursive because a transaction holds it while the engine reads and writes inside. A
/// transaction rolls nothing back: what fails inside one is not what these tests are about.
public final class MemoryDevice: SyncLocalRecords, SyncStateStore, @unchecked Sendable {
    public static let hosts = SyncCollection(namespace: "org.termhost.ssh", collection: "hosts", merge: .fields)

    public let name: String
    private let declared: [SyncCollection]
    private let lock = NSRecursiveLock()
    private var records: [SyncRecordID: [UInt8]] = [:]
    private var journal: [SyncRecordID] = []
    private var state: [String: [String: [UInt8]]] = [:]
    private var applied: (@Sendable (SyncRecordID, [UInt8]?) -> Void)?

    public init(_ name: String = "device", collections: [SyncCollection] = [MemoryDevice.hosts]) {
        self.name = name
        declared = collections
    }

    /// Called after the engine wrote a remote version here, with the record and its new bytes.
    public var onApply: (@Sendable (SyncRecordID, [UInt8]?) -> Void)? {
        get { locked { applied } }
        set { locked { applied = newValue } }
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    // A user's edits, as the owning plugin makes them (journaled, so the next sync sends them).
    public func write(_ id: SyncRecordID, _ payload: [UInt8]?) {
        locked {
            records[id] = payload
            journal.append(id)
        }
    }
    public func edit(_ id: SyncRecordID, _ json: String) { write(id, Array(json.utf8)) }
    public func putHost(_ key: String, _ json: String) { edit(.host(key), json) }
    public func host(_ key: String) -> String? { locked { records[.host(key)].map { String(decoding: $0, as: UTF8.self) } } }
    public var count: Int { locked { records.count } }

    // SyncLocalRecords
    public func collections() throws -> [SyncCollection] { declared }
    public func changes(after: Int64) throws -> (ids: [SyncRecordID], last: Int64) {
        locked { (Array(journal.dropFirst(Int(after))), Int64(journal.count)) }
    }
    public func all() throws -> [SyncRecordID] { locked { records.keys.sorted() } }
    public func read(_ id: SyncRecordID) throws -> [UInt8]? { locked { records[id] } }
    public func apply(_ id: SyncRecordID, payload: [UInt8]?) throws {
        write(id, payload)
        onApply?(id, payload)
    }

    // SyncStateStore
    public func get(_ collection: String, _ key: String) throws -> [UInt8]? { locked { state[collection]?[key] } }
    public func put(_ collection: String, _ key: String, _ value: [UInt8]) throws { locked { state[collection, default: [:]][key] = value } }
    public func remove(_ collection: String, _ key: String) throws { locked { _ = state[collection]?.removeValue(forKey: key) } }
    public func list(_ collection: String) throws -> [(key: String, value: [UInt8])] {
        locked { (state[collection] ?? [:]).sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) } }
    }
    public func transaction(_ body: () throws -> Void) throws { try locked(body) }
}

extension SyncRecordID {
    /// A saved host's record, as the SSH plugin keys it.
    public static func host(_ key: String) -> SyncRecordID { SyncRecordID(namespace: "org.termhost.ssh", collection: "hosts", key: key) }
}
