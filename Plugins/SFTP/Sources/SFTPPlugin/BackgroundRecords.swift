import Foundation
import TermhostSDK

/// The store collection of background transfers, keyed by ID. Device-local: never synced
/// (paths and running state belong to this machine).
struct BackgroundRecords {
    static let collection = "sftp.background"
    /// Ended transfers kept for `termhost transfers` to show, newest first; older ones go.
    static let keptEnded = 50
    let store: Store

    func all() throws(PluginError) -> [BackgroundRecord] {
        try store.list(BackgroundRecords.collection).compactMap { BackgroundRecord.decoded($0.value) }.sorted { $0.id < $1.id }
    }

    /// Keys whose value is not a record this version reads: shown, never run or removed.
    func unreadable() throws(PluginError) -> [String] {
        try store.list(BackgroundRecords.collection).filter { BackgroundRecord.decoded($0.value) == nil }.map(\.key)
    }

    func save(_ record: BackgroundRecord) throws(PluginError) {
        let data: Data
        do { data = try JSONEncoder().encode(record) } catch { throw PluginError("sftp: cannot encode transfer \(record.id): \(error)") }
        try store.put(BackgroundRecords.collection, String(record.id), Array(data))
    }

    func remove(_ id: Int) throws(PluginError) { try store.remove(BackgroundRecords.collection, String(id)) }

    /// The next ID: one past the highest kept (ended ones are dropped oldest first, so the
    /// highest is never dropped and an ID is never given twice in a row of records).
    func nextID() throws(PluginError) -> Int {
        // Keys are the store's word: one out of range is no ID of ours.
        let ids = try store.list(BackgroundRecords.collection).compactMap { Int($0.key) }.filter(BackgroundRecord.ids.contains)
        let next = (ids.max() ?? 0) + 1
        guard BackgroundRecord.ids.contains(next) else { throw PluginError("sftp: no transfer ID is left; remove old records of \(BackgroundRecords.collection)") }
        return next
    }

    /// Drops the oldest ended transfers past `keptEnded`.
    func prune() throws(PluginError) {
        let ended = try all().filter { $0.ended != nil }
        for old in ended.dropLast(BackgroundRecords.keptEnded) { try remove(old.id) }
    }
}
