import Foundation
import Glibc
import TermhostSDK

/// Where `forward run` processes leave their status files and control sockets, and the checks
/// that make that place safe to trust.
///
/// Place: `$XDG_STATE_HOME/termhost/forwarding`, or `$HOME/.local/state/termhost/forwarding`,
/// resolved as the host resolves its XDG directories (an XDG variable counts only when it is an
/// absolute path; `$HOME` from the environment, the password database only without it).
///
/// Trust: the directory is 0700 and must be a real directory (not a symbolic link) owned by
/// this user. Another user's directory is refused, not repaired: a socket there could answer
/// `forward stop` in our name, and a status file there could be swapped under us.
enum RunDirectory {
    static func path(_ env: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let home = env["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
        let state = env["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/state"
        return state + "/termhost/forwarding"
    }

    /// Creates the directory when missing (0700, and 0700 for a `termhost` parent created on
    /// the way), then checks it. [the run]
    static func prepare() throws(ForwardError) -> String {
        let dir = path()
        let parent = PathText.parent(dir)
        let grandparent = PathText.parent(parent)
        if access(grandparent, F_OK) != 0 {
            try? FileManager.default.createDirectory(atPath: grandparent, withIntermediateDirectories: true)
        }
        for d in [parent, dir] where mkdir(d, 0o700) != 0 && errno != EEXIST {
            throw ForwardError("termhost forward: cannot create \(d): \(Sockets.errorText())")
        }
        return try checked(dir)
    }

    /// The directory when it is safe to use; an error naming it and the reason otherwise.
    /// A directory of ours that others may enter is made 0700 again.
    @discardableResult
    static func checked(_ dir: String = path()) throws(ForwardError) -> String {
        var st = stat()
        guard lstat(dir, &st) == 0 else { throw ForwardError("termhost forward: cannot use \(dir): \(Sockets.errorText())") }
        if st.st_mode & S_IFMT == S_IFLNK {
            throw ForwardError("termhost forward: refusing \(dir): it is a symbolic link (expected a directory of your own)")
        }
        guard st.st_mode & S_IFMT == S_IFDIR else {
            throw ForwardError("termhost forward: refusing \(dir): it is not a directory")
        }
        guard st.st_uid == getuid() else {
            throw ForwardError("termhost forward: refusing \(dir): it belongs to uid \(st.st_uid), not to you (uid \(getuid()))")
        }
        if st.st_mode & 0o077 != 0 { chmod(dir, 0o700) }
        return dir
    }

    /// For the commands that read it (list, show, stop, retry): nothing when no run ever made
    /// the directory, the refusal when one is there but not safe.
    static func checkedIfPresent() throws(ForwardError) {
        var st = stat()
        if lstat(path(), &st) == 0 { try checked() }
    }

    /// Replaces `path` with `bytes`: written to a new 0600 file beside it (O_EXCL | O_NOFOLLOW:
    /// never through a link someone left there), then renamed over it.
    static func replace(_ path: String, with bytes: [UInt8]) -> Bool {
        let temporary = path + ".new"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            written += n
        }
        close(fd)
        guard written == bytes.count, rename(temporary, path) == 0 else { unlink(temporary); return false }
        return true
    }

    /// A regular file of ours, at most `limit` bytes, read without following a link.
    static func read(_ path: String, limit: Int = 1 << 20) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == getuid(), Int(st.st_size) <= limit else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var got = 0
        while got < bytes.count {
            let n = bytes[got...].withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            got += n
        }
        return Array(bytes[..<got])
    }
}
