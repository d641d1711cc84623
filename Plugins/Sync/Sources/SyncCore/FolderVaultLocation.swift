import Foundation

/// Where a folder vault may be, checked when it is chosen and at every sync (a link can be
/// planted later). Refused: a folder that is, or resolves to, `/` or a system directory (the
/// vault writes directories and files there and would mix them with the system's), and a path
/// that passes through a symbolic link owned by anyone but this user or root (whoever owns the
/// link decides where the vault's writes go, as OpenSSH's StrictModes refuses files another
/// user could redirect).
public enum FolderVaultLocation {
    /// Top-level directories that are the system's, refused themselves and everything below.
    static let systemTrees = ["/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin", "/sys", "/usr"]
    /// Directories that hold others' data or mounts: refused themselves, fine below.
    static let systemParents = ["/", "/home", "/media", "/mnt", "/opt", "/root", "/srv", "/tmp", "/var"]

    /// Why `path` (absolute) may not be a vault folder, or nil when it may.
    public static func refusal(_ path: String) -> String? {
        guard isAbsolute(path) else { return "the vault folder must be an absolute path" }
        if let why = systemRefusal(path) { return why }
        if let why = foreignLink(in: path) { return why }
        // Where the links lead, as far as it exists: a link to / or /etc is refused there too.
        if let resolved = resolvedExistingPrefix(path), resolved != path, let why = systemRefusal(resolved) {
            return "\(path) resolves to \(resolved): \(why)"
        }
        return nil
    }

    /// `path` without ".", "..", or repeated slashes, worked out on the text alone: links are
    /// not resolved here (NSString's standardizingPath may resolve them, which would hide the
    /// very link `refusal` must see). Split on the byte '/', as the kernel does: a '/' followed
    /// by a combining mark is one Character to Swift, but still a separator.
    public static func normalized(_ path: String) -> String {
        var parts: [String] = []
        for part in components(path) {
            if part == "." { continue }
            if part == ".." { _ = parts.popLast(); continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    static func components(_ path: String) -> [String] {
        path.utf8.split(separator: UInt8(ascii: "/")).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The path without its last component, on bytes like `components` (NSString's
    /// deletingLastPathComponent traps on "/srv//été").
    public static func parent(_ path: String) -> String {
        var parts = components(path)
        _ = parts.popLast()
        return (isAbsolute(path) ? "/" : "") + parts.joined(separator: "/")
    }

    public static func isAbsolute(_ path: String) -> Bool { path.utf8.first == UInt8(ascii: "/") }

    private static func systemRefusal(_ path: String) -> String? {
        let parts = components(normalized(path))
        let normal = "/" + parts.joined(separator: "/")
        let top = parts.first.map { "/" + $0 }
        if parts.count <= 1 && systemParents.contains(top ?? "/") || top.map(systemTrees.contains) == true {
            return "\(normal) is a system directory, not a place for a vault; choose a directory of its own"
        }
        return nil
    }

    /// The first symbolic link owned by someone else that `path` passes through, as the kernel
    /// walks it: the user's own links are followed (their targets walked in turn), so another
    /// user's link behind one of them is found too. At most 40 links, as the kernel allows.
    private static func foreignLink(in path: String) -> String? {
        var pending = components(path)
        var walked = ""   // the part of the path resolved so far, without links
        var links = 0
        while !pending.isEmpty {
            let part = pending.removeFirst()
            if part == "." { continue }
            if part == ".." { walked = walked.isEmpty ? "" : parent(walked); if walked == "/" { walked = "" }; continue }
            let next = walked + "/" + part
            var st = stat()
            guard lstat(next, &st) == 0 else { return nil }   // the rest does not exist yet
            guard (st.st_mode & S_IFMT) == S_IFLNK else { walked = next; continue }
            if st.st_uid != 0 && st.st_uid != geteuid() {
                let via = next == normalized(path) || normalized(path).hasPrefix(next + "/") ? "" : " (reached through the links of \(path))"
                return "\(next) is a symbolic link owned by uid \(st.st_uid), not by you or root\(via): refused (whoever owns it decides where the vault's files go)"
            }
            links += 1
            guard links <= 40, let target = linkTarget(next) else { return "\(path): too many symbolic links, or one that cannot be read" }
            if isAbsolute(target) { walked = "" }
            pending = components(target) + pending
        }
        return nil
    }

    private static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// realpath(3) of the longest existing prefix of `path`, with the rest appended. Split on
    /// bytes like `components`: NSString's path methods trap on some paths that are not UTF-8
    /// ("/;//" and a stray byte, found by the SyncFolder fuzz target).
    private static func resolvedExistingPrefix(_ path: String) -> String? {
        var parts = components(path)
        var rest: [String] = []
        while !parts.isEmpty && access("/" + parts.joined(separator: "/"), F_OK) != 0 {
            rest.insert(parts.removeLast(), at: 0)
        }
        let existing = "/" + parts.joined(separator: "/")
        guard let real = realpath(existing, nil) else { return nil }
        defer { free(real) }
        let base = String(cString: real)
        return rest.isEmpty ? base : (base == "/" ? "" : base) + "/" + rest.joined(separator: "/")
    }
}
