import CLibSSH2

/// SHA-256 through libcrypto (linked with libssh2), for checkpoints: the digest of the prefix
/// of a file that a transfer had written (download) or had acknowledged (upload) when it paused.
///
/// Hashing happens when a transfer pauses, never while bytes move: libssh2 1.10 already costs
/// about twice OpenSSH's CPU per byte, and most transfers never pause.
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

    /// Feeds the first `count` bytes of a local file; false if it is shorter.
    func feed(fd: Int32, count: UInt64) -> Bool {
        let chunk = 1 << 20
        let buf = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buf.deallocate() }
        var done: UInt64 = 0
        while done < count {
            // Clamped: a count from a checkpoint or a server's size may pass Int.max.
            let n = pread(fd, buf, min(chunk, Int(clamping: count - done)), off_t(clamping: done))
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            update(buf, n)
            done += UInt64(n)
        }
        return true
    }
}

extension SHA256 {
    /// The digest of a file's first bytes, up to `count` or as many as fit before the deadline
    /// (whole MiB): a checkpoint may vouch for fewer bytes than were written, never more.
    static func prefix(fd: Int32, count: UInt64, deadline: Date) -> (count: UInt64, hex: String) {
        let hasher = SHA256()
        let chunk = 1 << 20
        let buf = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buf.deallocate() }
        var done: UInt64 = 0
        while done < count, Date() < deadline {
            // Clamped: a count from a checkpoint or a server's size may pass Int.max.
            let n = pread(fd, buf, min(chunk, Int(clamping: count - done)), off_t(clamping: done))
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            hasher.update(buf, n)
            done += UInt64(n)
        }
        return (done, hasher.hexDigest())
    }
}

extension String {
    func leftPadded(_ width: Int, _ pad: Character) -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}

import Foundation
import Glibc
