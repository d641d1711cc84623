import TermhostSDK

/// FIDO/U2F security-key keys (OpenSSH's `ed25519-sk` and `ecdsa-sk`): the private half lives
/// in the authenticator, and every signature needs it (libfido2, usually a touch). Termhost has
/// no authenticator support, and libssh2 given such a key file fails on it without a word, so
/// the login went on to a password prompt with no hint why the key was not used. Such a key is
/// not offered; a line names the file, its type and fingerprint, and why, as OpenSSH names a
/// key it cannot use.
enum SecurityKey {
    static let ed25519 = "sk-ssh-ed25519@openssh.com"
    static let ecdsa = "sk-ecdsa-sha2-nistp256@openssh.com"

    /// The line for a key file whose public key is a security key's; nil for any other key
    /// (and for one whose public half cannot be read, which libssh2 then judges).
    static func skipNotice(file: String, blob: [UInt8]?) -> String? {
        guard let blob, let type = OfferedKey.keyType(of: blob), type == ed25519 || type == ecdsa else { return nil }
        let key = "\(VisibleText.of(file)) (\(HostKeyTrust.displayName(type)) \(KnownHosts.fingerprint(blob)))"
        return "Skipping key \(key): it is a FIDO security key (\(type)), which termhost cannot use; "
            + "give this host a key without a security key (termhost hosts edit NAME --identity FILE)"
    }
}
