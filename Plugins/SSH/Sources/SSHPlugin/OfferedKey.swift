import Foundation
import TermhostSDK

/// A public key Termhost offered to the server, named as `ssh -v` names it: where it came from
/// (a key file, the identity's stored key, the agent) and its type and SHA256 fingerprint.
/// A server that counts failures (sshd's MaxAuthTries) may disconnect before the right key's
/// turn; the list says which keys used the tries up.
struct OfferedKey {
    /// `/home/me/.ssh/id_ed25519`, `the key stored with the host's identity`, `agent key 'COMMENT'`.
    let source: String
    /// The public key blob (RFC 4253 section 6.6), when it could be read.
    let blob: [UInt8]?

    /// `SOURCE ED25519 SHA256:...`, or just SOURCE without a readable public key.
    var shown: String {
        guard let blob, let type = OfferedKey.keyType(of: blob) else { return source }
        return "\(source) \(HostKeyTrust.displayName(type)) \(KnownHosts.fingerprint(blob))"
    }

    /// The first string of a key blob: its type (`ssh-ed25519`, `ecdsa-sha2-nistp256`, ...).
    static func keyType(of blob: [UInt8]) -> String? {
        guard let (type, _) = string(in: blob[...]) else { return nil }
        return String(decoding: type, as: UTF8.self)
    }

    /// The public key of a private key file: its `.pub` beside it, as OpenSSH reads it, else the
    /// public part that OpenSSH's own format keeps unencrypted in front of the private part.
    static func publicBlob(ofKeyFile path: String, text: String) -> [UInt8]? {
        if let line = try? String(contentsOfFile: path + ".pub", encoding: .utf8) {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
            if fields.count >= 2, let blob = Base64.decode(fields[1]) { return blob }
        }
        return publicBlob(ofPrivateKey: Array(text.utf8))
    }

    /// The public blob of an OpenSSH-format private key ("openssh-key-v1": cipher, KDF, KDF
    /// options, the key count, then the first public key), readable without the passphrase.
    /// nil for PEM keys, which carry no public part in the clear.
    static func publicBlob(ofPrivateKey pem: [UInt8]) -> [UInt8]? {
        let text = String(decoding: pem, as: UTF8.self)
        guard text.contains("BEGIN OPENSSH PRIVATE KEY") else { return nil }
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let raw = Base64.decode(Substring(body)) else { return nil }
        let magic = Array("openssh-key-v1\0".utf8)
        guard raw.starts(with: magic) else { return nil }
        var rest = raw[magic.count...]
        for _ in 0..<3 {   // cipher name, KDF name, KDF options
            guard let (_, after) = string(in: rest) else { return nil }
            rest = after
        }
        guard rest.count >= 4 else { return nil }
        rest = rest.dropFirst(4)   // the number of keys
        return string(in: rest).map { Array($0.0) }
    }

    /// One SSH `string` (a 32-bit big-endian length, then the bytes) and what follows it.
    static func string(in bytes: ArraySlice<UInt8>) -> (ArraySlice<UInt8>, ArraySlice<UInt8>)? {
        guard bytes.count >= 4 else { return nil }
        let length = bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        let start = bytes.startIndex + 4
        guard length <= bytes.count - 4 else { return nil }
        return (bytes[start..<start + length], bytes[(start + length)...])
    }
}
