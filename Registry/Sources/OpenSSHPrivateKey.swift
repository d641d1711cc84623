import Foundation

/// A private key in OpenSSH's own format (PROTOCOL.key: "-----BEGIN OPENSSH PRIVATE KEY-----",
/// what ssh-keygen writes by default), for `termhost plugins sign`. Only unencrypted Ed25519
/// and ECDSA keys are read; an encrypted key is refused with the way out (ssh-keygen -Y sign
/// asks for the passphrase), since reading bcrypt-encrypted keys is not worth its code here.
public struct OpenSSHPrivateKey: Sendable {
    public enum Secret: Sendable {
        /// The 32-byte seed.
        case ed25519(seed: [UInt8])
        /// The private scalar, big-endian, left-padded to the curve's coordinate size.
        case ecdsa(scalar: [UInt8])
    }

    public let publicKey: SSHPublicKey
    public let secret: Secret
    public let comment: String

    public static let armorLabel = "OPENSSH PRIVATE KEY"
    public static let maxArmoredBytes = 64 << 10

    public init(armored text: String) throws(SSHFormatError) {
        guard text.utf8.count <= Self.maxArmoredBytes else { throw SSHFormatError("larger than \(Self.maxArmoredBytes >> 10) KiB") }
        if text.contains("-----BEGIN ") && !text.contains("-----BEGIN \(Self.armorLabel)-----") {
            throw SSHFormatError("not in OpenSSH's private key format (convert it with ssh-keygen -p -f KEY, or sign with ssh-keygen -Y sign)")
        }
        var r = SSHWireReader(try SSHArmor.decode(text, label: Self.armorLabel))
        guard try r.raw(15, "magic") == Array("openssh-key-v1\0".utf8) else { throw SSHFormatError("not an openssh-key-v1 key") }
        let cipher = try r.text("cipher name")
        let kdf = try r.text("KDF name")
        _ = try r.string("KDF options")
        guard cipher == "none" && kdf == "none" else {
            throw SSHFormatError("the key is encrypted with a passphrase; sign with 'ssh-keygen -Y sign -f KEY -n termhost-plugin-set plugin-set.json', which asks for it")
        }
        let count = try r.uint32("key count")
        guard count == 1 else { throw SSHFormatError("\(count) keys in the file; expected 1") }
        let publicKey = try SSHPublicKey(blob: r.string("public key"))
        var p = try SSHWireReader(r.string("private section"))
        guard r.isAtEnd else { throw SSHFormatError("bytes after the private section") }
        guard try p.uint32("check") == p.uint32("check") else { throw SSHFormatError("check bytes differ (a wrong passphrase or a damaged key)") }
        let type = try p.text("key type")
        guard type == publicKey.typeName else { throw SSHFormatError("private key of type '\(type)' beside a '\(publicKey.typeName)' public key") }
        switch publicKey.kind {
        case .ed25519(let pub):
            guard try p.string("Ed25519 public key") == pub else { throw SSHFormatError("the private part names another public key") }
            let both = try p.string("Ed25519 private key")
            guard both.count == 64, Array(both[32...]) == pub else { throw SSHFormatError("Ed25519 private key: expected seed and public key, 64 bytes") }
            secret = .ed25519(seed: Array(both[..<32]))
        case .ecdsa(let curve, let point):
            guard try p.text("ECDSA curve") == curve.rawValue, try p.string("ECDSA point") == point else {
                throw SSHFormatError("the private part names another public key")
            }
            let scalar = try p.positiveMPInt("ECDSA private scalar")
            guard !scalar.isEmpty, scalar.count <= curve.coordinateSize else { throw SSHFormatError("ECDSA private scalar out of range") }
            secret = .ecdsa(scalar: [UInt8](repeating: 0, count: curve.coordinateSize - scalar.count) + scalar)
        case .rsa:
            throw SSHFormatError("RSA keys are not read by termhost plugins sign; sign with ssh-keygen -Y sign, or use an Ed25519 or ECDSA key")
        }
        comment = try p.text("comment")
        // Padding 1, 2, 3... up to the cipher's block size (8 for "none").
        let padding = try p.raw(p.remaining, "padding")
        guard padding.count < 8, padding.enumerated().allSatisfy({ $0.element == UInt8($0.offset + 1) }) else {
            throw SSHFormatError("bad padding after the private key")
        }
        self.publicKey = publicKey
    }
}
