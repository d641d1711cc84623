import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads a small configuration file (a manifest, a plugin set, a policy) without ever blocking
/// or reading more than it may hold.
///
/// Why: these files are read on every command. A FIFO in their place would block each command
/// forever (open(2) and read(2) wait for a writer), a device could stream without end, and a
/// 100 MB file would be read in full every time. So the file is opened with O_NONBLOCK, must
/// be a regular file, and is refused when larger than its cap, naming the file and the cap;
/// only cap + 1 bytes are ever read, so a file that grows while being read is caught too.
public enum BoundedFile {
    /// Caps, in bytes. Generous for any real file of the kind (the largest manifest shipped is
    /// under 8 KiB), small enough that reading one costs nothing.
    public static let manifestCap = 1 << 20
    public static let pluginSetCap = 4 << 20
    public static let policyCap = 1 << 20

    /// Opens `path` (O_RDONLY | O_NONBLOCK | O_CLOEXEC, plus O_NOFOLLOW when `followSymlinks`
    /// is false) and reads it whole through `read(fd:file:cap:)`.
    public static func read(_ path: String, cap: Int, followSymlinks: Bool = true) throws(RegistryError) -> Data {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (followSymlinks ? 0 : O_NOFOLLOW))
        guard fd >= 0 else {
            let e = errno
            throw .unreadableFile(file: path, reason: e == ELOOP && !followSymlinks
                                  ? "it is a symbolic link, which is not followed here" : String(cString: strerror(e)))
        }
        defer { close(fd) }
        return try read(fd: fd, file: path, cap: cap)
    }

    /// Reads an already-open descriptor from offset 0: it must be a regular file of at most
    /// `cap` bytes.
    public static func read(fd: Int32, file: String, cap: Int) throws(RegistryError) -> Data {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .unreadableFile(file: file, reason: String(cString: strerror(errno))) }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw .notRegularFile(file: file, kind: kind(of: st.st_mode))
        }
        guard st.st_size <= off_t(cap) else { throw .fileTooLarge(file: file, size: Int64(st.st_size), cap: cap) }
        var bytes = [UInt8](repeating: 0, count: cap + 1)
        var total = 0
        while total < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + total, $0.count - total, off_t(total)) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw .unreadableFile(file: file, reason: String(cString: strerror(errno))) }
            if n == 0 { break }
            total += n
        }
        guard total <= cap else { throw .fileTooLarge(file: file, size: Int64(total), cap: cap) }
        return Data(bytes[0..<total])
    }

    /// "a FIFO", "a directory"...: what a file that is not a regular file is, for messages.
    public static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }

    /// "1 MiB", "512 KiB": caps as people write them.
    public static func size(_ bytes: Int) -> String {
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}
