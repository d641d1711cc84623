import CLibSSH2

/// Incremental SHA-256 through libcrypto (linked with libssh2): transfers hash their bytes as
/// they go, so a checkpoint can record the digest of exactly the prefix that was written.
final class SHA256 {
    private let ctx = EVP_MD_CTX_new()!

    init() { EVP_DigestInit_ex(ctx, EVP_sha256(), nil) }
    deinit { EVP_MD_CTX_free(ctx) }

    func update(_ bytes: UnsafeRawPointer, _ count: Int) { EVP_DigestUpdate(ctx, bytes, count) }

    /// The digest of everything so far, as hex; hashing can go on afterwards.
    func hexDigest() -> String {
        let copy = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(copy) }
        EVP_MD_CTX_copy_ex(copy, ctx)
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(copy, &out, &length)
        return out.map { String($0, radix: 16).leftPadded(2, "0") }.joined()
    }

    /// The digest of the first `count` bytes of a local file (nil if it is shorter), leaving
    /// the hasher fed with them.
    func feed(fd: Int32, count: UInt64) -> Bool {
        let chunk = 1 << 20
        let buf = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buf.deallocate() }
        var done: UInt64 = 0
        while done < count {
            let n = pread(fd, buf, min(chunk, Int(count - done)), off_t(done))
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            update(buf, n)
            done += UInt64(n)
        }
        return true
    }
}

extension String {
    func leftPadded(_ width: Int, _ pad: Character) -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}

import Glibc
