/// An OpenSSH host certificate (PROTOCOL.certkeys), as the server sends it in place of its host
/// key, and OpenSSH's client rules for it (sshconnect.c `check_host_cert`, sshkey.c
/// `sshkey_cert_check_authority`, as OpenSSH 9.2's ssh applies them): a host certificate, valid
/// now, naming the host among its principals (exactly; none listed means any host), with no
/// critical options (extensions are ignored), signed by the CA with an algorithm of its default
/// CASignatureAlgorithms
/// (never `ssh-rsa`, SHA-1). Which CA is trusted for the host (`@cert-authority`), whether the
/// CA's signature holds and the `@revoked` lines are HostKeyTrust's.
///
/// The bytes come from the server: every length is checked against what is left, and a blob
/// that is not a whole certificate of a supported key type is nil. Standard library only, so
/// the fuzz target Tests/Fuzz/HostCertificateFuzz.swift compiles this file as it is.
struct HostCertificate: Equatable {
    static let typeSuffix = "-cert-v01@openssh.com"
    /// SSH2_CERT_TYPE_HOST.
    static let hostType: UInt32 = 2
    /// OpenSSH 9.2's default CASignatureAlgorithms, without the security-key ones libssh2 lacks.
    static let signatureAlgorithms = ["ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
                                      "rsa-sha2-512", "rsa-sha2-256"]

    /// `ssh-ed25519-cert-v01@openssh.com`.
    let type: String
    /// The certified key as a plain public key blob (`ssh-ed25519` and its fields): what
    /// known_hosts holds when no CA vouches for the host.
    let plainKey: [UInt8]
    let serial: UInt64
    let certificateType: UInt32
    let keyID: String
    let principals: [String]
    let validAfter: UInt64
    let validBefore: UInt64
    let hasCriticalOptions: Bool
    /// The CA's public key blob.
    let signatureKey: [UInt8]
    /// The CA's signature blob (algorithm, signature) over `signedBytes`.
    let signature: [UInt8]
    /// Every byte of the certificate before the signature field.
    let signedBytes: [UInt8]

    /// The plain key type's fields after the nonce: one string for Ed25519, curve and point for
    /// ECDSA, e and n for RSA. Other types (DSA, security keys) are not read.
    static func keyFieldCount(plainType: String) -> Int? {
        switch plainType {
        case "ssh-ed25519": 1
        case "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "ssh-rsa": 2
        default: nil
        }
    }

    /// The certificate type a host key algorithm agrees on: `rsa-sha2-512-cert-v01@openssh.com`
    /// carries an `ssh-rsa-cert-v01@openssh.com` certificate, any other its own name.
    static func certificateType(ofAlgorithm algorithm: String) -> String {
        algorithm.hasPrefix("rsa-sha2-") ? "ssh-rsa" + typeSuffix : algorithm
    }

    /// Whether a key blob's type names a certificate (whatever else it holds).
    static func isCertificate(_ blob: [UInt8]) -> Bool {
        var r = Reader(blob)
        guard let type = r.string() else { return false }
        return String(decoding: type, as: UTF8.self).hasSuffix(typeSuffix)
    }

    init?(_ blob: [UInt8]) {
        var r = Reader(blob)
        guard let typeBytes = r.string(), let type = String(validating: typeBytes, as: UTF8.self), type.hasSuffix(Self.typeSuffix),
              let fieldCount = Self.keyFieldCount(plainType: String(type.dropLast(Self.typeSuffix.count))),
              r.string() != nil else { return nil }   // the nonce
        let plainType = Array(type.utf8.dropLast(Self.typeSuffix.utf8.count))
        let fieldsStart = r.offset
        for _ in 0..<fieldCount { guard r.string() != nil else { return nil } }
        var plain = Reader.encoded(plainType)
        plain += blob[fieldsStart..<r.offset]
        guard let serial = r.uint64(), let certificateType = r.uint32(), let keyID = r.string(),
              let principalList = r.string(), let validAfter = r.uint64(), let validBefore = r.uint64(),
              let critical = r.string(), r.string() != nil, r.string() != nil,   // extensions, reserved
              let signatureKey = r.string() else { return nil }
        let signedEnd = r.offset
        guard let signature = r.string(), r.isAtEnd else { return nil }
        var principals: [String] = []
        var p = Reader(Array(principalList))
        while !p.isAtEnd {
            guard let name = p.string() else { return nil }
            principals.append(String(decoding: name, as: UTF8.self))
        }
        self.type = type
        self.plainKey = plain
        self.serial = serial
        self.certificateType = certificateType
        self.keyID = String(decoding: keyID, as: UTF8.self)
        self.principals = principals
        self.validAfter = validAfter
        self.validBefore = validBefore
        self.hasCriticalOptions = !critical.isEmpty
        self.signatureKey = Array(signatureKey)
        self.signature = Array(signature)
        self.signedBytes = Array(blob[..<signedEnd])
    }

    /// The signature's algorithm (its first string), when it has one.
    var signatureAlgorithm: String? {
        var r = Reader(signature)
        return r.string().map { String(decoding: $0, as: UTF8.self) }
    }

    /// Why OpenSSH's client would refuse this certificate for `host` at `now` (seconds since
    /// 1970), in its words; nil when it passes every rule but the CA's signature.
    func problem(host: String, now: UInt64) -> String? {
        if certificateType != Self.hostType { return "Certificate invalid: not a host certificate" }
        if now < validAfter { return "Certificate invalid: not yet valid" }
        if now >= validBefore { return "Certificate invalid: expired" }
        // ssh lower-cases the host name it is given; a principal must equal it (OpenSSH 9.2's
        // client takes no patterns here: `127.0.0.*` does not name 127.0.0.1).
        let name = String(decoding: host.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
        if !principals.isEmpty && !principals.contains(name) {
            return "Certificate invalid: name is not a listed principal"
        }
        if hasCriticalOptions { return "Certificate contains unsupported critical options" }
        guard let algorithm = signatureAlgorithm, Self.signatureAlgorithms.contains(algorithm) else {
            return "Certificate signed with disallowed algorithm"
        }
        if Self.isCertificate(signatureKey) { return "Certificate invalid: its CA key is itself a certificate" }
        return nil
    }

    /// The SSH wire format's strings and integers (RFC 4251 section 5), each checked against
    /// what is left.
    struct Reader {
        let bytes: [UInt8]
        var offset = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        var isAtEnd: Bool { offset == bytes.count }

        mutating func uint32() -> UInt32? {
            guard bytes.count - offset >= 4 else { return nil }
            defer { offset += 4 }
            return bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }

        mutating func uint64() -> UInt64? {
            guard let high = uint32(), let low = uint32() else { return nil }
            return UInt64(high) << 32 | UInt64(low)
        }

        mutating func string() -> ArraySlice<UInt8>? {
            let start = offset
            guard let length = uint32(), bytes.count - offset >= Int(length) else { offset = start; return nil }
            defer { offset += Int(length) }
            return bytes[offset..<offset + Int(length)]
        }

        static func encoded(_ s: [UInt8]) -> [UInt8] {
            let n = UInt32(s.count)
            return [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] + s
        }
    }
}
