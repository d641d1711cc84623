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
        feedPrefix(fd: fd, count: count, deadline: nil) == count
    }

    /// The digest of a file's first bytes, up to `count` or as many as fit before the deadline
    /// (whole MiB): a checkpoint may vouch for fewer bytes than were written, never more.
    static func prefix(fd: Int32, count: UInt64, deadline: Date) -> (count: UInt64, hex: String) {
        let hasher = SHA256()
        let done = hasher.feedPrefix(fd: fd, count: count, deadline: deadline)
        return (done, hasher.hexDigest())
    }

    /// Feeds a file's bytes from its start, a MiB at a time, until `count`, the file's end or
    /// `deadline` (looked at before each MiB); returns how many it fed.
    private func feedPrefix(fd: Int32, count: UInt64, deadline: Date?) -> UInt64 {
        let chunk = 1 << 20
        let buf = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buf.deallocate() }
        var done: UInt64 = 0
        while done < count, deadline.map({ Date() < $0 }) ?? true {
            // Clamped: a count from a checkpoint or a server's size may pass Int.max.
            let n = pread(fd, buf, min(chunk, Int(clamping: count - done)), off_t(clamping: done))
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            update(buf, n)
            done += UInt64(n)
        }
        return done
    }
}
