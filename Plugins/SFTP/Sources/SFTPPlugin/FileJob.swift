import Glibc
import SSHCrypto

/// One file to move. For a download, remotePath is the source and localPath the final name;
/// for an upload the other way round. The bytes go to a partial file beside the final name
/// (".<name>.termhost-partial") and are renamed into place only once complete.
struct FileJob: Sendable {
    typealias Direction = TransferDirection
    var direction: Direction
    var host: String
    var remotePath: String
    var localPath: String
    /// A download's trusted local directory (the one the user named): every directory below it
    /// on the way to localPath is opened without following symbolic links (LocalTree).
    var localRoot = ""
    /// The final name may be replaced (the conflict policy said overwrite).
    var overwrite = false
    /// Continue from a checkpoint when one is found.
    var resume = false
    /// The name shown in progress and errors.
    var display: String
    /// The size when the transfer was planned (the source's, as listed or stat'ed).
    var size: UInt64 = 0

    /// NAME_MAX of Linux file systems (and of OpenSSH's sftp-server's): a partial name longer than
    /// the final name's 255 bytes could not be created, so a legal name could not be transferred.
    static let nameMax = 255
    static let partialSuffix = ".termhost-partial"

    /// `.NAME.termhost-partial` beside the final name; when that would pass `nameMax`, NAME is cut
    /// (at a character boundary) and a hash of the whole name keeps it apart from its neighbours:
    /// `.PREFIX~HASH.termhost-partial`. The same name always gives the same partial (resume).
    static func partialName(_ path: String) -> String {
        let name = path.lastComponent
        var partial = "." + name + partialSuffix
        if partial.utf8.count > nameMax {
            // SHA-256, cut to 64 bits: the names come from a server, and a hash anyone can
            // collide on purpose (FNV) would let one long name resume into another's partial.
            let tag = "~" + String(SHA256.hex(SHA256.digest(Array(name.utf8))).prefix(16))
            let room = nameMax - 1 - tag.utf8.count - partialSuffix.utf8.count
            var prefix = ""
            for scalar in name.unicodeScalars {
                guard prefix.utf8.count + String(scalar).utf8.count <= room else { break }
                prefix.unicodeScalars.append(scalar)
            }
            partial = "." + prefix + tag + partialSuffix
        }
        return path.parentPath.appendingPath(partial)
    }

    var partialPath: String { FileJob.partialName(direction == .download ? localPath : remotePath) }

    var checkpointKey: String {
        direction == .download ? Checkpoints.key(download: localPath) : Checkpoints.key(upload: host, remotePath)
    }
}

/// The upload window: an upload keeps in flight what one write call is given (libssh2's SFTP
/// internals, Docs/SFTP.md). Downloads size their reads per file, from its round trip
/// (ReadAhead).
enum TransferBuffer {
    /// At most 2.1 MB in flight: 70 of libssh2's 30,000-byte requests, or 8 of the 258,048-byte
    /// ones a server with OpenSSH's limits takes (WriteRequests); OpenSSH's sshd opens a 2 MiB
    /// channel window, so more would only wait in the client.
    static let writeWindowLimit = 70 * WriteRequests.standard

    /// A whole number of requests (at least one): the window then grows by whole requests, so
    /// every request is full but a file's last, and with page-sized requests each starts on a
    /// page of the remote file.
    static func writeWindow(request: Int) -> Int { max(1, writeWindowLimit / request) * request }
}

/// Local file helpers that report errno as SFTPError.
enum LocalFile {
    static func writeAll(_ fd: Int32, _ p: UnsafeRawPointer, _ count: Int, path: String) throws(SFTPError) {
        var done = 0
        while done < count {
            let n = write(fd, p + done, count - done)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw SFTPError.local(path, "cannot write") }
            done += n
        }
    }

    /// pwrite(2) of every byte at a file offset (segments write their own parts of one file).
    static func writeAll(_ fd: Int32, _ p: UnsafeRawPointer, _ count: Int, at offset: UInt64, path: String) throws(SFTPError) {
        // The offset comes from the server's size (a segment of a file it claims is 2^64 bytes
        // starts past 2^63): past what off_t holds, the write fails as a file too large would.
        guard let base = off_t(exactly: offset), base <= off_t.max - off_t(count) else {
            throw SFTPError.local(path, "cannot write", errno: EFBIG)
        }
        var done = 0
        while done < count {
            let n = pwrite(fd, p + done, count - done, base + off_t(done))
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw SFTPError.local(path, "cannot write") }
            done += n
        }
    }

    static func stat(_ path: String, follow: Bool = true) -> Glibc.stat? {
        var st = Glibc.stat()
        return fstatat(AT_FDCWD, path, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) == 0 ? st : nil
    }

    /// Moves a finished partial file into place: rename(2) replaces atomically when allowed;
    /// otherwise link(2), which refuses an existing name, so a file that appeared meanwhile is
    /// never clobbered.
    static func commit(_ from: String, to: String, replace: Bool) throws(SFTPError) {
        if replace {
            guard rename(from, to) == 0 else { throw SFTPError.local(to, "cannot rename \(from) to") }
            return
        }
        if link(from, to) == 0 { unlink(from); return }
        if errno == EEXIST { throw SFTPError(.refused, "sftp: \(to) appeared during the transfer; the download is kept as \(from)") }
        // File systems without hard links: check, then rename.
        guard stat(to, follow: false) == nil, rename(from, to) == 0 else { throw SFTPError.local(to, "cannot rename \(from) to") }
    }
}
