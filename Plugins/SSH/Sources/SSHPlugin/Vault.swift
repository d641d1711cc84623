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

    /// A saved host whose name is a pattern (`web-*`, imported from a `Host web-*` block) that
    /// matches `text`, as that host: its name `text`, `%h` in its address `text`. For a bare
    /// name only (not `user@host:port`). Where several match, the most specific wins (the most
    /// characters that are not `*` or `?`; then the name first in order), so `web-*` beats `*`.
    func template(for text: String) throws(PluginError) -> HostRecord? {
        guard HostRules.name(text) == nil, !text.contains("*"), !text.contains("?") else { return nil }
        let name = Array(text.lowercased().utf8)
        let specificity = { (r: HostRecord) in r.name.filter { $0 != "*" && $0 != "?" }.count }
        let records = try all()
        let matching = records.filter { $0.isTemplate && SSHConfigParser.glob(Array($0.name.lowercased().utf8), name) }
        guard var chosen = matching.sorted(by: { (specificity($0), $1.name) > (specificity($1), $0.name) }).first else { return nil }
        chosen.name = text
        chosen.address = SSHConfigParser.expandHost(chosen.address, name: text)
        return chosen
    }

    func all() throws(PluginError) -> [HostRecord] {
        try store.list("hosts").compactMap { try? JSONDecoder().decode(HostRecord.self, from: Data($0.value)) }
    }

    /// A saved host by name (with its identity applied), else an ad-hoc `user@host:port`.
    func resolve(_ text: String) throws(PluginError) -> Destination? {
        var found = try host(text)
        if let saved = found, saved.isTemplate {
            throw PluginError("'\(VisibleText.of(text))' is a template for the names it matches, not a host: connect to one of them (termhost ssh NAME)")
        }
        if found == nil { found = try template(for: text) }
        guard let saved = found else { return Destination.parse(text) }
        // Saved before the rules were checked on input (or edited in the store by hand): a
        // port out of range or a name that reads as an option never reaches a connection.
        if let why = HostRules.check(name: saved.name, address: saved.address, port: saved.port, user: saved.user,
                                     identityFile: saved.identityFile, jump: saved.jump,
                                     keepaliveInterval: saved.keepaliveInterval, keepaliveCountMax: saved.keepaliveCountMax,
                                     sendEnv: saved.sendEnv, setEnv: saved.setEnv, certificateFile: saved.certificateFile,
                                     hostKeyAlias: saved.hostKeyAlias, moreIdentityFiles: saved.moreIdentityFiles) {
            throw PluginError("the saved host '\(VisibleText.of(saved.name))' is refused: \(why); change it with 'termhost hosts edit' or remove it")
        }
        var d = saved.destination
        if let name = saved.identity {
            guard let identity = try identity(name) else {
                throw PluginError("host '\(saved.name)' uses identity '\(name)', which does not exist (termhost identities list)")
            }
            d.user = d.user ?? identity.user
            d.identityFile = d.identityFile ?? identity.keyFile
            try checkSecretKinds(of: identity)
            d.passwordSecret = identity.passwordSecret
            d.keySecret = identity.keySecret
            d.identityName = name
            d.keyElsewhere = identity.storedKey == true && identity.keySecret == nil ? true : nil
            d.passwordElsewhere = identity.storedPassword == true && identity.passwordSecret == nil ? true : nil
        }
        return d
    }

    // MARK: What each stored secret is

    /// What a secret was stored as. Recorded on this device only (collection "secret-kinds",
    /// never synced) when `identities add/edit` stores it, so that a secret is only ever used
    /// as what it was stored as: a stored private key is never sent as a password.
    enum SecretKind: String { case key, password }

    func recordKind(_ kind: SecretKind, of secret: String) throws(PluginError) {
        try store.put("secret-kinds", secret, Array(kind.rawValue.utf8))
    }

    func forgetKind(of secret: String) { try? store.remove("secret-kinds", secret) }

    /// Refuses an identity whose secret IDs are used as what they were not stored as: one ID
    /// named as both key and password, or an ID recorded as the other kind. (A peer that
    /// planted this device's secret IDs in a synced identity is refused at sync already; this
    /// holds whatever wrote the record.) A secret stored before kinds were recorded has none
    /// and is used as named.
    func checkSecretKinds(of identity: IdentityRecord) throws(PluginError) {
        let fix = "store them again with 'termhost identities edit \(VisibleText.of(identity.name)) --store-key FILE' or '--password'"
        if let key = identity.keySecret, key == identity.passwordSecret {
            throw PluginError("identity '\(VisibleText.of(identity.name))' names one secret as both its key and its password: refused; \(fix)")
        }
        for (id, wanted) in [(identity.keySecret, SecretKind.key), (identity.passwordSecret, .password)] {
            guard let id, let bytes = try store.get("secret-kinds", id) else { continue }
            let stored = String(decoding: bytes, as: UTF8.self)
            if stored != wanted.rawValue {
                throw PluginError("identity '\(VisibleText.of(identity.name))' would use a stored \(VisibleText.of(stored)) as its \(wanted.rawValue): refused; \(fix)")
            }
        }
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
