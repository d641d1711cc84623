import CLibSSH2

/// SHA-256 through libcrypto's EVP interface (libcrypto is linked with libssh2 anyway): host-key
/// fingerprints in the SSH plugin, checkpoint digests of partial files in the SFTP plugin.
///
/// Streaming: `update` as often as needed, then `digest()` or `hexDigest()`, which leave the
/// state as it was so hashing can go on. Not thread-safe: one owner at a time.
public final class SHA256 {
    private let ctx = EVP_MD_CTX_new()!

    public init() { EVP_DigestInit_ex(ctx, EVP_sha256(), nil) }
    deinit { EVP_MD_CTX_free(ctx) }

    /// Feeds `count` bytes at `bytes`.
    public func update(_ bytes: UnsafeRawPointer, _ count: Int) { EVP_DigestUpdate(ctx, bytes, count) }

    /// Feeds `bytes`.
    public func update(_ bytes: [UInt8]) { EVP_DigestUpdate(ctx, bytes, bytes.count) }

    /// The 32-byte digest of everything fed so far.
    public func digest() -> [UInt8] {
        let copy = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(copy) }
        EVP_MD_CTX_copy_ex(copy, ctx)
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(copy, &out, &length)
        return out
    }

    /// `digest()` as 64 lower-case hex digits.
    public func hexDigest() -> String { SHA256.hex(digest()) }

    /// The digest of `bytes`, in one call.
    public static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = EVP_Digest(bytes, bytes.count, &out, &length, EVP_sha256(), nil)
        return out
    }

    /// Lower-case hex, two digits a byte.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for b in bytes {
            text.append(digits[Int(b >> 4)])
            text.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
