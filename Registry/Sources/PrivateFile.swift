import Foundation
#if canImport(TermhostSDK)
import TermhostSDK   // PathText
#endif

/// Termhost's own files under the XDG directories (the store and its -wal and -shm, the log,
/// the probe cache, the crash marker, their directories) are private to the user whatever the
/// umask: created 0600 and 0700, and checked each time they are opened. (Here, beside
/// BoundedFile, so that the loader, the services and the runtime share it.)
///
/// What is checked, and why two answers: a file or directory owned by someone else, or that
/// group or others can write, may hold what another user put there (a host record, a trusted
/// key), so it is refused with the path and the fix. One that is only readable by others (a
/// store created under umask 022 by an older Termhost) is ours and sound: it is tightened to
/// 0600 / 0700, since what it holds (hosts, identities, conversations) is no one else's to read.
public enum PrivateFile {
    /// Creates `path` if absent (0600, never through a link) and checks it; the refusal, or nil.
    public static func prepare(file path: String) -> String? {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            return errno == ELOOP ? "\(path) is a symbolic link: refused (Termhost never opens its files through one)"
                : "cannot open \(path): \(String(cString: strerror(errno)))"
        }
        defer { close(fd) }
        return check(fd: fd, path: path, privateMode: 0o600, fix: "chmod 600 \(path)")
    }

    /// Checks `path` when it exists, never creating it (the store's -wal and -shm, which an
    /// older Termhost may have left readable by others); the refusal, or nil.
    public static func prepare(existingFile path: String) -> String? {
        let fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            return errno == ELOOP ? "\(path) is a symbolic link: refused (Termhost never opens its files through one)"
                : "cannot open \(path): \(String(cString: strerror(errno)))"
        }
        defer { close(fd) }
        return check(fd: fd, path: path, privateMode: 0o600, fix: "chmod 600 \(path)")
    }

    /// Makes Termhost's own directory `path` (0700; its parents as the user's umask makes them,
    /// since they are the user's, not Termhost's) and checks it, tightening one an older
    /// Termhost made 0755; the refusal, or nil.
    public static func prepare(ownDirectory path: String) -> String? {
        let parent = PathText.parent(path)
        if !parent.isEmpty { try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true) }
        if mkdir(path, 0o700) != 0 && errno != EEXIST { return "cannot create \(path): \(String(cString: strerror(errno)))" }
        return prepare(directory: path)
    }

    /// Checks an existing directory of Termhost's own (the store's); the refusal, or nil.
    public static func prepare(directory path: String) -> String? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return errno == ENOENT ? nil : "cannot open \(path): \(String(cString: strerror(errno)))" }
        defer { close(fd) }
        return check(fd: fd, path: path, privateMode: 0o700, fix: "chmod 700 \(path)")
    }

    /// What `prepare` would refuse at `path` (a file or a directory; nil when absent), changing
    /// nothing: for `doctor`, which only reports.
    public static func refusal(at path: String) -> String? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        if (st.st_mode & S_IFMT) == S_IFLNK { return "\(path) is a symbolic link: refused (Termhost never opens its files through one)" }
        let directory = (st.st_mode & S_IFMT) == S_IFDIR
        return verdict(st, path: path, fix: "chmod \(directory ? "700" : "600") \(path)")
    }

    public static func check(fd: Int32, path: String, privateMode: mode_t, fix: String) -> String? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return "cannot inspect \(path): \(String(cString: strerror(errno)))" }
        if let refused = verdict(st, path: path, fix: fix) { return refused }
        if st.st_mode & 0o077 != 0 { _ = fchmod(fd, privateMode) }   // readable by others only: ours to tighten
        return nil
    }

    private static func verdict(_ st: stat, path: String, fix: String) -> String? {
        guard st.st_uid == geteuid() else {
            return "\(path) is owned by uid \(st.st_uid), not by you (uid \(geteuid())): refused, since whoever owns it decides what it holds; move it aside"
        }
        let mode = st.st_mode & 0o777
        if mode & 0o022 != 0 {
            return "\(path) can be written by its group or others (mode \(String(mode, radix: 8))): refused, since anyone could have put anything in it; check it, then run: \(fix)"
        }
        return nil
    }
}
