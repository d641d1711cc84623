import CLibSSH2

/// HMAC-SHA1, the hash of OpenSSH's hashed known_hosts names (`|1|salt|hash`).
///
/// For many short keys and messages (a new 20-byte salt on every line of a hashed file) an
/// instance builds the MAC from two SHA-1 digests (RFC 2104) on one digest context and one SHA-1
/// implementation fetched once: OpenSSL's one-shot HMAC() looks the algorithm up and allocates a
/// context on every call, which dominated the cost of a large hashed known_hosts file.
/// Not thread-safe: one owner at a time.
public final class HMACSHA1 {
    private let ctx = EVP_MD_CTX_new()!
    private let md: OpaquePointer?
    private var pad = [UInt8](repeating: 0, count: 64)
    private var inner = [UInt8](repeating: 0, count: 20)
    private var outer = [UInt8](repeating: 0, count: 20)

    public init() { md = EVP_MD_fetch(nil, "SHA1", nil) }

    deinit {
        EVP_MD_CTX_free(ctx)
        if let md { EVP_MD_free(md) }
    }

    /// Whether HMAC-SHA1(key, data) is `expected`.
    public func matches(key: [UInt8], data: [UInt8], expected: [UInt8]) -> Bool {
        guard expected.count == 20, let md else { return false }
        // Keys longer than the block are first hashed (never the case for known_hosts salts).
        let k = key.count > 64 ? HMACSHA1.sha1(key) : key
        for i in 0..<64 { pad[i] = (i < k.count ? k[i] : 0) ^ 0x36 }
        var length: UInt32 = 0
        EVP_DigestInit_ex(ctx, md, nil)
        EVP_DigestUpdate(ctx, pad, 64)
        EVP_DigestUpdate(ctx, data, data.count)
        EVP_DigestFinal_ex(ctx, &inner, &length)
        for i in 0..<64 { pad[i] ^= 0x36 ^ 0x5c }
        EVP_DigestInit_ex(ctx, md, nil)
        EVP_DigestUpdate(ctx, pad, 64)
        EVP_DigestUpdate(ctx, inner, 20)
        EVP_DigestFinal_ex(ctx, &outer, &length)
        return outer == expected
    }

    /// HMAC-SHA1(key, data) in one call (one new hashed line, not a file of them).
    public static func mac(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        _ = HMAC(EVP_sha1(), key, Int32(key.count), data, data.count, &out, &length)
        return out
    }

    /// SHA-1 of `bytes` (for an HMAC key longer than SHA-1's block).
    static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        _ = EVP_Digest(bytes, bytes.count, &out, &length, EVP_sha1(), nil)
        return out
    }
}
