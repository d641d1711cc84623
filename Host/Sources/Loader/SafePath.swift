import Foundation
import Glibc
import TermhostSDK

/// Who may have changed a plugin file: OpenSSH's `safe_path()` rule for authorized_keys, applied
/// to plugin libraries, manifests and plugin sets.
///
/// Why: the host runs a plugin's code with the invoking user's rights (root's, for root). If
/// anyone else can write the library, or rename entries in any directory above it, they choose
/// the code that runs: root's `termhost` ran a library owned by `nobody` from a world-writable
/// plugin directory. So the file, as opened (its descriptor, so that what was checked is what
/// is read or loaded), must be owned by root or the invoking user and not writable by group or
/// others, and so must every directory from it up to `/`.
///
/// One difference from OpenSSH: a directory with the sticky bit (like `/tmp`, mode 1777) that is
/// owned by root or the user is accepted although others can write it. The sticky bit stops
/// them from renaming or removing entries they do not own, so they cannot replace a directory
/// of ours inside it; what they can add there is checked by this same rule when it is opened.
/// Without this, every plugin under `/tmp` (test suites, `mktemp -d` builds) would be refused.
///
/// Symbolic links are followed (distributors link libraries into place), and both the link's
/// directories and the target's are checked: whoever can change either chooses the code.
public enum SafePath {
    /// Why the file open on `fd` (reached through `path`) is unsafe, or nil if it is safe.
    public static func problem(fd: Int32, path: String, uid: uid_t = geteuid()) -> String? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return "cannot check \(path): \(String(cString: strerror(errno)))" }
        if let p = ownerProblem(st, path, uid) { return p }
        if st.st_mode & 0o022 != 0 {
            return "\(path) is writable by \(whom(st.st_mode)) (mode \(mode(st.st_mode))); \(rule(uid))"
        }
        // The directories through which the name was reached, and those of the file as opened
        // (they differ when a symbolic link is on the way).
        var chains: [String] = []
        if let named = resolved(PathText.parent(path)) { chains.append(named) }
        if let opened = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
           opened.hasPrefix("/") {
            let dir = PathText.parent(opened)
            if !chains.contains(dir) { chains.append(dir) }
        }
        for start in chains {
            if let p = directoryProblem(start, uid) { return p }
        }
        return nil
    }

    /// The first directory from `dir` up to `/` that others could write to, or nil.
    public static func directoryProblem(_ dir: String, _ uid: uid_t = geteuid()) -> String? {
        var current = dir
        while true {
            var st = stat()
            guard stat(current, &st) == 0 else { return "cannot check directory \(current): \(String(cString: strerror(errno)))" }
            if let p = ownerProblem(st, "directory " + current, uid) { return p }
            let sticky = st.st_mode & S_ISVTX != 0
            if st.st_mode & 0o022 != 0 && !sticky {
                return "directory \(current) is writable by \(whom(st.st_mode)) (mode \(mode(st.st_mode))); \(rule(uid))"
            }
            if current == "/" || current.isEmpty { return nil }
            current = PathText.parent(current)
        }
    }

    /// realpath(3): the directory with every symbolic link resolved.
    static func resolved(_ path: String) -> String? {
        guard let p = realpath(path.isEmpty ? "." : path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    static func ownerProblem(_ st: stat, _ what: String, _ uid: uid_t) -> String? {
        guard st.st_uid != 0 && st.st_uid != uid else { return nil }
        return "\(what) is owned by \(user(st.st_uid)), not by root or by you (\(user(uid))); \(rule(uid))"
    }

    static func rule(_ uid: uid_t) -> String {
        "refused: plugin files and every directory above them must be owned by root or by you and writable by no one else"
    }

    static func whom(_ mode: mode_t) -> String {
        switch (mode & 0o020 != 0, mode & 0o002 != 0) {
        case (true, true): "its group and others"
        case (true, false): "its group"
        default: "others"
        }
    }

    static func mode(_ m: mode_t) -> String {
        let digits = String(m & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// "uid 65534 (nobody)".
    static func user(_ uid: uid_t) -> String {
        guard let pw = getpwuid(uid), let name = pw.pointee.pw_name else { return "uid \(uid)" }
        return "uid \(uid) (\(String(cString: name)))"
    }
}
