import CLibSSH2

/// SHA-256 and HMAC-SHA1 through libcrypto (already linked by libssh2).
enum Digest {
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ctx = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(ctx) }
        EVP_DigestInit_ex(ctx, EVP_sha256(), nil)
        EVP_DigestUpdate(ctx, bytes, bytes.count)
        EVP_DigestFinal_ex(ctx, &out, &length)
        return out
    }

    static func hmacSHA1(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        _ = HMAC(EVP_sha1(), key, Int32(key.count), data, data.count, &out, &length)
        return out
    }

    static func random(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        _ = RAND_bytes(&out, Int32(count))
        return out
    }
}

/// Base64 without Foundation's quirks, for SSH key blobs and fingerprints.
enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8], padding: Bool = true) -> String {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let b0 = bytes[i], b1 = i + 1 < bytes.count ? bytes[i + 1] : 0, b2 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 3) << 4 | b1 >> 4)])
            out.append(i + 1 < bytes.count ? alphabet[Int((b1 & 15) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[Int(b2 & 63)] : UInt8(ascii: "="))
            i += 3
        }
        var s = String(decoding: out, as: UTF8.self)
        if !padding { while s.hasSuffix("=") { s.removeLast() } }
        return s
    }

    static func decode(_ text: Substring) -> [UInt8]? {
        var values: [UInt8] = []
        for c in text.utf8 {
            if c == UInt8(ascii: "=") { break }
            guard let v = alphabet.firstIndex(of: c) else { return nil }
            values.append(UInt8(v))
        }
        var out: [UInt8] = []
        var i = 0
        while i + 1 < values.count {
            out.append(values[i] << 2 | values[i + 1] >> 4)
            if i + 2 < values.count { out.append((values[i + 1] & 15) << 4 | values[i + 2] >> 2) }
            if i + 3 < values.count { out.append((values[i + 2] & 3) << 6 | values[i + 3]) }
            i += 4
        }
        return out
    }
}
