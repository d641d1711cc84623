import CLibSSH2
import TermhostSDK

/// The host keys accepted in Termhost on any device of the vault: the SSH plugin's syncable
/// store collection `known_hosts` (SyncedHostKeyRecord). Only keys the user accepts and saves
/// in Termhost go in; `~/.ssh/known_hosts` is read, never copied here.
///
/// The host ID stands for the lookup name ("host", "[host]:port", lower-cased). It must be the
/// same on every device, so that two devices accepting different keys for one host write the
/// same record and conflict; that rules out OpenSSH's per-line random salt. So that the vault
/// does not give the names away more cheaply than a hashed known_hosts file does, the ID is
/// PBKDF2-HMAC-SHA256 with `iterations` rounds: guessing a name costs an attacker `iterations`
/// HMACs, where a hashed known_hosts file of N lines costs N HMACs a guess. (Unlike a salted
/// file, one table of guesses serves every vault.)
enum SyncedHostKeys {
    static let collection = "known_hosts"
    static let iterations: Int32 = 20_000
    static let salt = Array("termhost known_hosts host ID 1".utf8)

    static func hostID(host: String, port: Int) -> String {
        let name = Array(KnownHosts.lookupName(host: host, port: port).utf8).map(KnownHostsParser.lowercased)
        var out = [UInt8](repeating: 0, count: 32)
        let ok = name.withUnsafeBufferPointer { n in
            n.withMemoryRebound(to: CChar.self) { n in
                PKCS5_PBKDF2_HMAC(n.baseAddress, Int32(n.count), salt, Int32(salt.count), iterations, EVP_sha256(), Int32(out.count), &out)
            }
        }
        // Only an out-of-memory libcrypto fails here; an ID of zeros then matches nothing saved.
        if ok != 1 { out = [UInt8](repeating: 0, count: 32) }
        return out.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// Every usable record; a record that cannot be decoded is left out with a warning naming
    /// it (never trusted, never deleted: the sync engine keeps it as it is).
    static func load(_ store: Store) throws(PluginError) -> (records: [SyncedHostKeyRecord], warnings: [String]) {
        var records: [SyncedHostKeyRecord] = [], warnings: [String] = []
        for (key, value) in try store.list(collection) {
            switch SyncedHostKeyRecord.decode(recordKey: key, value: value) {
            case .success(let r): records.append(r)
            case .failure(let refusal):
                if warnings.count < KnownHosts.maximumWarnings {
                    warnings.append("synced known hosts record '\(VisibleText.of(key))': \(refusal.reason); ignored")
                }
            }
        }
        return (records, warnings)
    }

    /// Keeps an accepted key for the vault; false when the key's type is not one a record can hold.
    @discardableResult
    static func save(_ store: Store, host: String, port: Int, key: [UInt8]) throws(PluginError) -> Bool {
        guard let record = SyncedHostKeyRecord(hostID: hostID(host: host, port: port), key: key) else { return false }
        try store.put(collection, record.recordKey, record.value)
        return true
    }
}
