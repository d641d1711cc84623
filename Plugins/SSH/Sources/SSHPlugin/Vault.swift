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

    /// A saved host by name (with its identity applied), else an ad-hoc `user@host:port`.
    func resolve(_ text: String) throws(PluginError) -> Destination? {
        guard let saved = try host(text) else { return Destination.parse(text) }
        var d = saved.destination
        if let name = saved.identity {
            guard let identity = try identity(name) else {
                throw PluginError("host '\(saved.name)' uses identity '\(name)', which does not exist (termhost identities list)")
            }
            d.user = d.user ?? identity.user
            d.identityFile = d.identityFile ?? identity.keyFile
            d.passwordSecret = identity.passwordSecret
            d.keySecret = identity.keySecret
        }
        return d
    }

    func identity(_ name: String) throws(PluginError) -> IdentityRecord? {
        guard let bytes = try store.get("identities", name) else { return nil }
        do { return try JSONDecoder().decode(IdentityRecord.self, from: Data(bytes)) } catch {
            throw PluginError("the saved identity '\(name)' cannot be read (\(error))")
        }
    }

    func save(_ identity: IdentityRecord) throws(PluginError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try store.put("identities", identity.name, [UInt8]((try? encoder.encode(identity)) ?? Data()))
    }

    func removeIdentity(_ name: String) throws(PluginError) { try store.remove("identities", name) }

    func identities() throws(PluginError) -> [IdentityRecord] {
        try store.list("identities").compactMap { try? JSONDecoder().decode(IdentityRecord.self, from: Data($0.value)) }
    }
}
