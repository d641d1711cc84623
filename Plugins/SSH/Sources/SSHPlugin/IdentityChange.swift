import TermhostSDK

/// Changes that span the host store (the identity record) and the secrets service (its key and
/// password), ordered so that a failure at any step leaves the previous identity working:
///
/// 1. new secrets are written under NEW IDs (the old ones are untouched);
/// 2. the identity is switched to them in the store, one write (one SQLite transaction);
/// 3. only then are the replaced secrets deleted.
///
/// If 1 or 2 fails (the store locked by another process, the secrets file unwritable), the
/// secrets written in 1 are removed again and the old record still names the old, intact
/// secrets. If 3 fails, an unused secret stays behind: harmless, and reported. Removing an
/// identity is the same order backwards: the record first, then its secrets.
///
/// The bug this replaces: `identities edit --store-key` deleted the old key before saving the
/// record, so a locked store left the identity pointing at a deleted key.
final class IdentityChange {
    let vault: Vault
    let secrets: Secrets?
    /// Clean-up that failed after the change itself succeeded (or was undone).
    private(set) var warnings: [String] = []

    init(vault: Vault, secrets: Secrets?) {
        self.vault = vault
        self.secrets = secrets
    }

    /// Saves `identity` with a new stored key and/or password (nil: keep the current one) and
    /// returns what was saved. Throws with nothing changed.
    func save(_ identity: IdentityRecord, key: [UInt8]?, password: [UInt8]?,
              replacing old: IdentityRecord?) throws(PluginError) -> IdentityRecord {
        var updated = identity
        var written: [String] = []
        do throws(PluginError) {
            if key != nil || password != nil {
                guard let secrets else { throw PluginError("no secrets service") }
                if let key {
                    updated.keySecret = try secrets.put(key)
                    written.append(updated.keySecret!)
                    try vault.recordKind(.key, of: updated.keySecret!)
                    updated.storedKey = true
                }
                if let password {
                    updated.passwordSecret = try secrets.put(password)
                    written.append(updated.passwordSecret!)
                    try vault.recordKind(.password, of: updated.passwordSecret!)
                    updated.storedPassword = true
                }
            }
            try vault.save(updated)
        } catch {
            for id in written { removeSecret(id, what: "a secret written for the change that failed") }
            throw error
        }
        // The record now names the new secrets: the replaced ones are unused.
        if let old {
            if key != nil, let id = old.keySecret, id != updated.keySecret { removeSecret(id, what: "the replaced key") }
            if password != nil, let id = old.passwordSecret, id != updated.passwordSecret { removeSecret(id, what: "the replaced password") }
        }
        return updated
    }

    /// Removes the identity, then its secrets. Throws with nothing changed.
    func remove(_ identity: IdentityRecord) throws(PluginError) {
        try vault.removeIdentity(identity.name)
        if let id = identity.keySecret { removeSecret(id, what: "its stored key") }
        if let id = identity.passwordSecret { removeSecret(id, what: "its password") }
    }

    private func removeSecret(_ id: String, what: String) {
        guard let secrets else { return }
        vault.forgetKind(of: id)
        do { try secrets.remove(id) } catch {
            warnings.append("\(what) stays in the secrets store, unused: \(error)")
        }
    }
}
