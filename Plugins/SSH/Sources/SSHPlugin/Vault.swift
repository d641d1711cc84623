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

    /// Many hosts in one transaction (an import): one commit instead of one per host, and
    /// either all of them are saved or none.
    func save(_ records: [HostRecord]) throws(PluginError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        do {
            try store.transaction {
                for record in records { try store.put("hosts", record.name, [UInt8]((try? encoder.encode(record)) ?? Data())) }
            }
        } catch let error as PluginError { throw error } catch { throw PluginError("\(error)") }
    }

    /// Whether a host of that name is saved, readable or not (so `rm` can remove one that
    /// cannot be read).
    func hostExists(_ name: String) throws(PluginError) -> Bool { try store.get("hosts", name) != nil }

    /// The names of every saved host, in one query (an import checks thousands at once).
    func hostNames() throws(PluginError) -> Set<String> { Set(try store.list("hosts").map(\.key)) }

    func remove(_ name: String) throws(PluginError) { try store.remove("hosts", name) }

    func all() throws(PluginError) -> [HostRecord] {
        try store.list("hosts").compactMap { try? JSONDecoder().decode(HostRecord.self, from: Data($0.value)) }
    }

    /// A saved host by name (with its identity applied), else an ad-hoc `user@host:port`.
    func resolve(_ text: String) throws(PluginError) -> Destination? {
        guard let saved = try host(text) else { return Destination.parse(text) }
        // Saved before the rules were checked on input (or edited in the store by hand): a
        // port out of range or a name that reads as an option never reaches a connection.
        if let why = HostRules.check(name: saved.name, address: saved.address, port: saved.port, user: saved.user,
                                     identityFile: saved.identityFile, jump: saved.jump,
                                     keepaliveInterval: saved.keepaliveInterval, keepaliveCountMax: saved.keepaliveCountMax) {
            throw PluginError("the saved host '\(VisibleText.of(saved.name))' is refused: \(why); change it with 'termhost hosts edit' or remove it")
        }
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
