import Foundation

/// An SSHSIG signature (OpenSSH's PROTOCOL.sshsig, what `ssh-keygen -Y sign` writes): the
/// signer's public key, the namespace the signature is for, the hash algorithm applied to the
/// message, and the signature over
///
///     "SSHSIG" || string(namespace) || string(reserved) || string(hash_algorithm) || string(H(message))
///
/// Parsing checks the structure and that the signature's algorithm fits the key (ssh-rsa's
/// SHA-1 signatures are refused, as OpenSSH refuses them for SSHSIG); the cryptography is the
/// loader's (libcrypto).
public struct SSHSignature: Equatable, Sendable {
    public enum HashAlgorithm: String, Sendable {
        case sha256, sha512
    }

    public let publicKey: SSHPublicKey
    public let namespace: String
    public let hashAlgorithm: HashAlgorithm
    /// "ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-256", "rsa-sha2-512".
    public let signatureAlgorithm: String
    /// The algorithm's signature bytes: 64 for Ed25519, the RSA signature, or for ECDSA the wire
    /// encoding of mpint r, mpint s.
    public let signature: [UInt8]

    public static let magic = Array("SSHSIG".utf8)
    public static let armorLabel = "SSH SIGNATURE"
    /// Far above any real signature (an RSA-16384 one armours to under 8 KiB).
    public static let maxArmoredBytes = 64 << 10

    public init(publicKey: SSHPublicKey, namespace: String, hashAlgorithm: HashAlgorithm,
                signatureAlgorithm: String, signature: [UInt8]) {
        self.publicKey = publicKey
        self.namespace = namespace
        self.hashAlgorithm = hashAlgorithm
        self.signatureAlgorithm = signatureAlgorithm
        self.signature = signature
    }

    /// Parses the armoured text of a `.sig` file.
    public init(armored text: String) throws(SSHFormatError) {
        guard text.utf8.count <= Self.maxArmoredBytes else { throw SSHFormatError("larger than \(Self.maxArmoredBytes >> 10) KiB") }
        try self.init(blob: SSHArmor.decode(text, label: Self.armorLabel))
    }

    public init(blob: [UInt8]) throws(SSHFormatError) {
        var r = SSHWireReader(blob)
        guard try r.raw(6, "SSHSIG preamble") == Self.magic else { throw SSHFormatError("not an SSHSIG signature (no SSHSIG preamble)") }
        let version = try r.uint32("SSHSIG version")
        guard version == 1 else { throw SSHFormatError("SSHSIG version \(version); only version 1 is known") }
        let key = try SSHPublicKey(blob: r.string("public key"))
        let namespace = try r.text("namespace")
        guard !namespace.isEmpty else { throw SSHFormatError("empty namespace") }
        _ = try r.string("reserved")
        let hashName = try r.text("hash algorithm")
        guard let hash = HashAlgorithm(rawValue: hashName) else {
            throw SSHFormatError("hash algorithm '\(hashName)'; only sha256 and sha512 are allowed")
        }
        var s = try SSHWireReader(r.string("signature"))
        guard r.isAtEnd else { throw SSHFormatError("\(r.remaining) bytes after the signature") }
        let algorithm = try s.text("signature algorithm")
        let bytes = try s.string("signature bytes")
        guard s.isAtEnd else { throw SSHFormatError("\(s.remaining) bytes after the signature bytes") }
        try Self.check(algorithm: algorithm, bytes: bytes, for: key)
        self.init(publicKey: key, namespace: namespace, hashAlgorithm: hash, signatureAlgorithm: algorithm, signature: bytes)
    }

    static func check(algorithm: String, bytes: [UInt8], for key: SSHPublicKey) throws(SSHFormatError) {
        switch key.kind {
        case .ed25519:
            guard algorithm == "ssh-ed25519" else { throw SSHFormatError("signature algorithm '\(algorithm)' for an Ed25519 key") }
            guard bytes.count == 64 else { throw SSHFormatError("Ed25519 signature of \(bytes.count) bytes, expected 64") }
        case .ecdsa(let curve, _):
            guard algorithm == curve.keyType else { throw SSHFormatError("signature algorithm '\(algorithm)' for a \(curve.keyType) key") }
            var r = SSHWireReader(bytes)
            for part in ["ECDSA r", "ECDSA s"] {
                let v = try r.positiveMPInt(part)
                guard !v.isEmpty, v.count <= curve.coordinateSize else { throw SSHFormatError("\(part) out of range") }
            }
            guard r.isAtEnd else { throw SSHFormatError("bytes after the ECDSA signature") }
        case .rsa(_, let modulus):
            if algorithm == "ssh-rsa" {
                throw SSHFormatError("RSA signature with SHA-1 (ssh-rsa) refused; sign with rsa-sha2-512 (ssh-keygen -Y sign does by default)")
            }
            guard algorithm == "rsa-sha2-256" || algorithm == "rsa-sha2-512" else {
                throw SSHFormatError("signature algorithm '\(algorithm)' for an RSA key")
            }
            guard bytes.count <= modulus.count else { throw SSHFormatError("RSA signature longer than the key's modulus") }
        }
    }

    /// The bytes the signature is over, given the message's digest under `hashAlgorithm`.
    public func signedData(messageDigest: [UInt8]) -> [UInt8] {
        Self.signedData(namespace: namespace, hashAlgorithm: hashAlgorithm, messageDigest: messageDigest)
    }

    public static func signedData(namespace: String, hashAlgorithm: HashAlgorithm, messageDigest: [UInt8]) -> [UInt8] {
        var w = SSHWireWriter()
        w.string(namespace)
        w.string([UInt8]())
        w.string(hashAlgorithm.rawValue)
        w.string(messageDigest)
        return magic + w.bytes
    }

    /// The wire encoding, the inverse of `init(blob:)`.
    public var blob: [UInt8] {
        var sig = SSHWireWriter()
        sig.string(signatureAlgorithm)
        sig.string(signature)
        var w = SSHWireWriter()
        w.uint32(1)
        w.string(publicKey.blob)
        w.string(namespace)
        w.string([UInt8]())
        w.string(hashAlgorithm.rawValue)
        w.string(sig.bytes)
        return Self.magic + w.bytes
    }

    /// The armoured text ssh-keygen writes to a `.sig` file.
    public var armored: String { SSHArmor.encode(blob, label: Self.armorLabel) }
}
