import Foundation
import Glibc
import SSHCrypto

/// Checkpoint digests: the SHA-256 of the prefix of a file that a transfer had written
/// (download) or had acknowledged (upload) when it paused.
///
/// Hashing happens when a transfer pauses, never while bytes move: libssh2 1.10 already costs
/// about twice OpenSSH's CPU per byte, and most transfers never pause.
extension SHA256 {
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
