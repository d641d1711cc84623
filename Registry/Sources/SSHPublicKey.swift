import Foundation

/// An SSH public key as OpenSSH encodes it (RFC 4253 §6.6, RFC 5656, RFC 8709): the kinds a
/// plugin set may be signed with. Two keys are the same key when their wire encodings are equal,
/// which is how OpenSSH compares them too.
///
/// Refused: keys on FIDO tokens (sk-...), certificates, DSA, and RSA moduli under 1024 bits
/// (OpenSSH's own minimum).
public struct SSHPublicKey: Equatable, Hashable, Sendable {
    public enum Curve: String, Sendable, CaseIterable {
        case nistp256, nistp384, nistp521

        /// Bytes of one coordinate.
        public var coordinateSize: Int {
            switch self {
            case .nistp256: 32
            case .nistp384: 48
            case .nistp521: 66
            }
        }

        public var keyType: String { "ecdsa-sha2-\(rawValue)" }
    }

    public enum Kind: Equatable, Hashable, Sendable {
        case ed25519(publicKey: [UInt8])
        /// `point`: the uncompressed SEC1 point, 0x04 || X || Y.
        case ecdsa(Curve, point: [UInt8])
        /// Big-endian magnitudes without leading zeros.
        case rsa(exponent: [UInt8], modulus: [UInt8])
    }

    public let kind: Kind
    /// The wire encoding: what fingerprints hash and what comparisons compare.
    public let blob: [UInt8]

    /// The largest RSA modulus accepted (OpenSSH's SSHBUF_MAX_BIGNUM allows 16384 bits).
    public static let maxRSABits = 16384

    public init(blob: [UInt8]) throws(SSHFormatError) {
        var r = SSHWireReader(blob)
        let type = try r.text("key type")
        switch type {
        case "ssh-ed25519":
            let key = try r.string("Ed25519 key")
            guard key.count == 32 else { throw SSHFormatError("Ed25519 key: \(key.count) bytes, expected 32") }
            kind = .ed25519(publicKey: key)
        case _ where type.hasPrefix("ecdsa-sha2-"):
            guard let curve = Curve.allCases.first(where: { $0.keyType == type }) else { throw SSHFormatError("unsupported key type '\(type)'") }
            let name = try r.text("ECDSA curve")
            guard name == curve.rawValue else { throw SSHFormatError("ECDSA key of type '\(type)' names curve '\(name)'") }
            let point = try r.string("ECDSA point")
            guard point.count == 1 + 2 * curve.coordinateSize, point[0] == 4 else {
                throw SSHFormatError("ECDSA point: expected an uncompressed \(curve.rawValue) point")
            }
            kind = .ecdsa(curve, point: point)
        case "ssh-rsa":
            let e = try r.positiveMPInt("RSA exponent")
            let n = try r.positiveMPInt("RSA modulus")
            let bits = n.isEmpty ? 0 : (n.count - 1) * 8 + (8 - n[0].leadingZeroBitCount)
            guard bits >= 1024 else { throw SSHFormatError("RSA key of \(bits) bits; at least 1024 are required") }
            guard bits <= Self.maxRSABits else { throw SSHFormatError("RSA key of \(bits) bits; at most \(Self.maxRSABits) are accepted") }
            guard let last = e.last, last & 1 == 1, e.count <= 8 else { throw SSHFormatError("RSA exponent is not a small odd number") }
            kind = .rsa(exponent: e, modulus: n)
        case _ where type.hasPrefix("sk-"):
            throw SSHFormatError("security key types ('\(type)') are not supported for plugin sets")
        case _ where type.contains("-cert-v01@openssh.com"):
            throw SSHFormatError("certificates ('\(type)') are not supported for plugin sets; use the plain key")
        default:
            throw SSHFormatError("unsupported key type '\(type)'")
        }
        guard r.isAtEnd else { throw SSHFormatError("\(type) key: \(r.remaining) bytes after the key") }
        self.blob = blob
    }

    /// A key as a line of authorized_keys or a .pub file writes it: "TYPE BASE64 [comment]".
    /// The type must name the same type as the blob.
    public init(line: some StringProtocol) throws(SSHFormatError) {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count >= 2 else { throw SSHFormatError("expected a key type and a base64 key") }
        guard let data = Data(base64Encoded: String(fields[1])) else { throw SSHFormatError("the key is not base64") }
        try self.init(blob: [UInt8](data))
        guard typeName == fields[0] else { throw SSHFormatError("key type '\(fields[0])' does not match the key's own type '\(typeName)'") }
    }

    /// "ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa".
    public var typeName: String {
        switch kind {
        case .ed25519: "ssh-ed25519"
        case .ecdsa(let curve, _): curve.keyType
        case .rsa: "ssh-rsa"
        }
    }

    /// "ED25519", "ECDSA", "RSA", as ssh-keygen -l prints it after the fingerprint.
    public var displayType: String {
        switch kind {
        case .ed25519: "ED25519"
        case .ecdsa: "ECDSA"
        case .rsa: "RSA"
        }
    }

    /// "TYPE BASE64", as in a .pub file without its comment.
    public var line: String { typeName + " " + Data(blob).base64EncodedString() }

    /// "SHA256:" and the unpadded base64 of `sha256` (the blob's digest): ssh-keygen's fingerprint.
    public static func fingerprint(sha256 digest: [UInt8]) -> String {
        "SHA256:" + Data(digest).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }
}
