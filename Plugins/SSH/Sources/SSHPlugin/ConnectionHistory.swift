import Foundation
import TermhostSDK

/// Per-host logs in the host store, oldest dropped first past 1,000 rows a host (NOTES §8):
/// connection history (collection "history": one row per session that authenticated, written
/// when it ends) and command history (collection "commands": commands that shell integration
/// reported during `termhost ssh`).
struct HostLog<Row: Codable> {
    static var limitPerHost: Int { 1000 }

    let store: Store
    let collection: String

    static func prefix(_ host: String) -> String { host + "\u{1F}" }   // a separator no name contains

    func append(_ row: Row, host: String, at time: Double) throws(PluginError) {
        let prefix = HostLog.prefix(host)
        // Keys sort by time within a host.
        let key = prefix + String(format: "%017.6f", time)
        let data = (try? JSONEncoder().encode(row)) ?? Data()
        do {
            try store.transaction {
                try store.put(collection, key, [UInt8](data))
                let keys = try store.list(collection, prefix: prefix).map(\.key)
                for old in keys.dropLast(HostLog.limitPerHost) { try store.remove(collection, old) }
            }
        } catch {
            throw (error as? PluginError) ?? PluginError("\(error)")
        }
    }

    func rows(host: String) throws(PluginError) -> [Row] {
        try store.list(collection, prefix: HostLog.prefix(host)).compactMap { try? JSONDecoder().decode(Row.self, from: Data($0.value)) }
    }
}

/// Connection history: starts only after authentication, ends when the session closes.
struct ConnectionHistory {
    struct Row: Codable, Equatable {
        var host: String
        var user: String
        var started: Double
        var ended: Double
        var status: Int32
    }

    let log: HostLog<Row>
    init(store: Store) { log = HostLog(store: store, collection: "history") }

    func record(_ row: Row) throws(PluginError) { try log.append(row, host: row.host, at: row.started) }
    func rows(host: String) throws(PluginError) -> [Row] { try log.rows(host: host) }
}

/// Command history, from shell integration.
struct CommandHistory {
    struct Row: Codable, Equatable {
        var command: String
        var at: Double
    }

    let log: HostLog<Row>
    init(store: Store) { log = HostLog(store: store, collection: "commands") }

    func record(_ command: String, host: String) throws(PluginError) {
        let now = Date().timeIntervalSince1970
        try log.append(Row(command: command, at: now), host: host, at: now)
    }

    func rows(host: String) throws(PluginError) -> [Row] { try log.rows(host: host) }
}
