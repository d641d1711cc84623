/// The parent and the last component of a file path, worked out on its bytes.
///
/// Why not NSString's `deletingLastPathComponent` and `lastPathComponent`: in the toolchain's
/// Foundation they trap (crash the process) on a path where "//" comes right before a
/// non-ASCII character ("/srv//été"), and such paths come from places nobody controls: the
/// environment (XDG_DATA_HOME, HOME), config files, a vault folder's setting. Split on the byte
/// '/', as the kernel does; "." and ".." are kept as they are (the kernel resolves them).
public enum PathText {
    /// The path without its last component: "/a/b" and "/a/b/" give "/a", "/a" gives "/",
    /// "a" gives "", "/" gives "/".
    public static func parent(_ path: String) -> String {
        var parts = components(path)
        _ = parts.popLast()
        let joined = parts.joined(separator: "/")
        return isAbsolute(path) ? "/" + joined : joined
    }

    /// The last component: "/a/b" and "/a/b/" give "b", "/" gives "/", "" gives "".
    public static func lastComponent(_ path: String) -> String {
        components(path).last ?? (isAbsolute(path) ? "/" : "")
    }

    /// The non-empty components between slashes.
    public static func components(_ path: String) -> [String] {
        path.utf8.split(separator: UInt8(ascii: "/")).map { String(decoding: $0, as: UTF8.self) }
    }

    public static func isAbsolute(_ path: String) -> Bool { path.utf8.first == UInt8(ascii: "/") }
}
