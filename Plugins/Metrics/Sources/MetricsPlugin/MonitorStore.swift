import Foundation
import TermhostSDK

extension Monitor {
    /// The interval is clamped to what `metrics add` accepts (1 to 3600 s): the store may hold
    /// anything another process or a sync wrote, and 0 would make the remote loop spin.
    var config: Sampler.Config { Sampler.Config(interval: min(max(interval, 1), 3600), interfaces: interfaces) }
}

struct MonitorStore {
    let store: Store
    static let collection = "monitors"

    /// In list order.
    func all() throws -> [Monitor] {
        try store.list(MonitorStore.collection).compactMap { try? JSONDecoder().decode(Monitor.self, from: Data($0.value)) }
            .sorted { ($0.order, $0.host) < ($1.order, $1.host) }
    }

    func find(_ host: String) throws -> Monitor? { try all().first { $0.host == host } }

    func save(_ m: Monitor) throws {
        let data = try JSONEncoder().encode(m)
        try store.put(MonitorStore.collection, m.host, Array(data))
    }

    func remove(_ host: String) throws { try store.remove(MonitorStore.collection, host) }

    /// Moves host to position (1-based, clamped) and renumbers everything, in one transaction.
    func move(_ host: String, to position: Int) throws {
        var list = try all()
        guard let i = list.firstIndex(where: { $0.host == host }) else { return }
        let m = list.remove(at: i)
        list.insert(m, at: min(max(position - 1, 0), list.count))
        try store.transaction {
            for (n, var item) in list.enumerated() { item.order = n + 1; try save(item) }
        }
    }
}
