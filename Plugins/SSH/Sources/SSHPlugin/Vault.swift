import Foundation
import TermhostSDK

/// Saved hosts in the host store (collection "hosts", keyed by name, JSON values).
struct Vault {
    let store: Store
    /// For the commands that ask before changing many records.
    var interact: Interact? = nil

    func host(_ name: String) throws(PluginError) -> HostRecord? {
        guard let bytes = try store.get("hosts", name) else { return nil }
        do { return try JSONDecoder().decode(HostRecord.self, from: Data(bytes)) } catch {
            throw PluginError("the saved host '\(name)' cannot be read (\(error)); remove it with 'termhost hosts rm \(name)'")
        }
    }

    func save(_ record: HostRecord) throws(PluginError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = (try? encoder.encode(record)) ?? Data()
        try store.put("hosts", record.name, [UInt8](data))
    }

    func remove(_ name: String) throws(PluginError) { try store.remove("hosts", name) }

    func all() throws(PluginError) -> [HostRecord] {
        try store.list("hosts").compactMap { try? JSONDecoder().decode(HostRecord.self, from: Data($0.value)) }
    }

    /// A saved host by name, else an ad-hoc `user@host:port`.
    func resolve(_ text: String) throws(PluginError) -> Destination? {
        if let saved = try host(text) { return saved.destination }
        return Destination.parse(text)
    }
}
