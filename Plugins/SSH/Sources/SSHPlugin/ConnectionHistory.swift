import Foundation
import TermhostSDK

/// Connection history in the host store (collection "history"): one row per session, written
/// when it ends; a row exists only for sessions that authenticated (a failed attempt is not
/// history). At most 1,000 rows are kept per host; the oldest go first.
struct ConnectionHistory {
    static let limitPerHost = 1000

    struct Row: Codable, Equatable {
        var host: String
        var user: String
        var started: Double
        var ended: Double
        var status: Int32
    }

    let store: Store

    func record(_ row: Row) throws(PluginError) {
        let prefix = ConnectionHistory.prefix(row.host)
        // Keys sort by time: host, a separator that cannot appear in names, zero-padded start.
        let key = prefix + String(format: "%017.6f", row.started)
        let data = (try? JSONEncoder().encode(row)) ?? Data()
        do {
            try store.transaction {
                try store.put("history", key, [UInt8](data))
                let keys = try store.list("history", prefix: prefix).map(\.key)
                for old in keys.dropLast(ConnectionHistory.limitPerHost) { try store.remove("history", old) }
            }
        } catch {
            throw (error as? PluginError) ?? PluginError("\(error)")
        }
    }

    func rows(host: String) throws(PluginError) -> [Row] {
        try store.list("history", prefix: ConnectionHistory.prefix(host)).compactMap { try? JSONDecoder().decode(Row.self, from: Data($0.value)) }
    }

    static func prefix(_ host: String) -> String { host + "\u{1F}" }
}
