import CCrypto
import TermhostRegistry

/// The cryptography of SSHSIG signatures, in process through libcrypto (no ssh-keygen at run
/// time): Ed25519 (EVP_DigestVerify, no pre-hash), ECDSA on P-256/384/521 with SHA-256/384/512
/// (the SSH signature's r and s mpints rewritten as the DER libcrypto reads), and RSA PKCS#1
/// v1.5 with SHA-256 or SHA-512. Signing covers the keys `OpenSSHPrivateKey` reads.
public enum SSHSignatureCrypto {
    /// The namespace of plugin set signatures: `ssh-keygen -Y sign -n termhost-plugin-set`.
    public static let pluginSetNamespace = "termhost-plugin-set"

    /// ssh-keygen's fingerprint of the key: "SHA256:" and the unpadded base64 of its blob's digest.
    public static func fingerprint(_ key: SSHPublicKey) -> String {
        SSHPublicKey.fingerprint(sha256: digest(key.blob, EVP_sha256()))
    }

    /// Whether `signature` is a valid signature of `message` by its own key, in its own namespace.
    public static func isValid(_ signature: SSHSignature, message: [UInt8]) -> Bool {
        let data = signature.signedData(messageDigest: digest(message, messageDigest(signature.hashAlgorithm)))
        guard let key = publicKey(signature.publicKey) else { return false }
        defer { EVP_PKEY_free(key) }
        var sig = signature.signature
        let md: OpaquePointer?
        switch signature.publicKey.kind {
        case .ed25519:
            md = nil
        case .ecdsa(let curve, _):
            var r = SSHWireReader(sig)
            guard let rr = try? r.positiveMPInt("r"), let ss = try? r.positiveMPInt("s") else { return false }
            sig = DER.sequence(DER.integer(rr), DER.integer(ss))
            md = curveDigest(curve)
        case .rsa(_, let modulus):
            // SSH lets an RSA signature drop leading zero bytes; libcrypto wants the modulus' length.
            sig = [UInt8](repeating: 0, count: max(0, modulus.count - sig.count)) + sig
            md = signature.signatureAlgorithm == "rsa-sha2-512" ? EVP_sha512() : EVP_sha256()
        }
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, md, nil, key) == 1 else { return false }
        return EVP_DigestVerify(ctx, sig, sig.count, data, data.count) == 1
    }

    /// Signs `message` as `ssh-keygen -Y sign -n namespace` does (hash sha512).
    public static func sign(_ message: [UInt8], with privateKey: OpenSSHPrivateKey, namespace: String) throws(SSHFormatError) -> SSHSignature {
        let data = SSHSignature.signedData(namespace: namespace, hashAlgorithm: .sha512, messageDigest: digest(message, EVP_sha512()))
        let key: OpaquePointer?
        let md: OpaquePointer?
        switch (privateKey.secret, privateKey.publicKey.kind) {
        case (.ed25519(let seed), _):
            key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, seed, seed.count)
            md = nil
        case (.ecdsa(let scalar), .ecdsa(let curve, let point)):
            let sec1 = DER.sequence(DER.integer([1]), DER.octetString(scalar), DER.element(0xa0, curveOID(curve)),
                                    DER.element(0xa1, DER.bitString(point)))
            key = sec1.withUnsafeBufferPointer { buffer in
                var p: UnsafePointer<UInt8>? = buffer.baseAddress
                return d2i_PrivateKey(EVP_PKEY_EC, nil, &p, buffer.count)
            }
            md = curveDigest(curve)
        default:
            throw SSHFormatError("unsupported private key")
        }
        guard let key else { throw SSHFormatError("libcrypto refused the private key") }
        defer { EVP_PKEY_free(key) }
        guard let ctx = EVP_MD_CTX_new() else { throw SSHFormatError("out of memory") }
        defer { EVP_MD_CTX_free(ctx) }
        var length = 0
        guard EVP_DigestSignInit(ctx, nil, md, nil, key) == 1, EVP_DigestSign(ctx, nil, &length, data, data.count) == 1 else {
            throw SSHFormatError("libcrypto could not sign with the key")
        }
        var out = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(ctx, &out, &length, data, data.count) == 1 else { throw SSHFormatError("libcrypto could not sign with the key") }
        out = Array(out[..<length])
        var bytes = out
        if case .ecdsa = privateKey.publicKey.kind {
            guard let (r, s) = DER.integerPair(out) else { throw SSHFormatError("libcrypto wrote an unexpected ECDSA signature") }
            var w = SSHWireWriter()
            w.positiveMPInt(r)
            w.positiveMPInt(s)
            bytes = w.bytes
        }
        return SSHSignature(publicKey: privateKey.publicKey, namespace: namespace, hashAlgorithm: .sha512,
                            signatureAlgorithm: privateKey.publicKey.typeName, signature: bytes)
    }

    static func publicKey(_ key: SSHPublicKey) -> OpaquePointer? {
        let spki: [UInt8]
        switch key.kind {
        case .ed25519(let raw):
            return EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, raw, raw.count)
        case .ecdsa(let curve, let point):
            spki = DER.sequence(DER.sequence([0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01], curveOID(curve)), DER.bitString(point))
        case .rsa(let e, let n):
            spki = DER.sequence(DER.sequence([0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01], [0x05, 0x00]),
                                DER.bitString(DER.sequence(DER.integer(n), DER.integer(e))))
        }
        return spki.withUnsafeBufferPointer { buffer in
            var p: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &p, buffer.count)
        }
    }

    static func curveOID(_ curve: SSHPublicKey.Curve) -> [UInt8] {
        switch curve {
        case .nistp256: [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]
        case .nistp384: [0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22]
        case .nistp521: [0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23]
        }
    }

    static func curveDigest(_ curve: SSHPublicKey.Curve) -> OpaquePointer? {
        switch curve {
        case .nistp256: EVP_sha256()
        case .nistp384: EVP_sha384()
        case .nistp521: EVP_sha512()
        }
    }

    static func messageDigest(_ algorithm: SSHSignature.HashAlgorithm) -> OpaquePointer? {
        algorithm == .sha512 ? EVP_sha512() : EVP_sha256()
    }

    static func digest(_ bytes: [UInt8], _ md: OpaquePointer?) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        EVP_Digest(bytes, bytes.count, &out, &length, md, nil)
        return Array(out[..<Int(length)])
    }
}
