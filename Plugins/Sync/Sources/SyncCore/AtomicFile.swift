import Foundation

/// Whole-file writes that a reader (or a crash) never sees half done: write a temporary file in
/// the same directory, fsync it, move it into place, fsync the directory.
enum AtomicFile {
    enum Placement {
        /// Fails with EEXIST when the name is taken (link(2)), so two writers never clobber.
        case create
        /// Replaces what is there (rename(2)).
        case replace
    }

    /// Returns false only for `.create` when the name is already taken; throws on I/O errors.
    static func write(_ bytes: [UInt8], to path: String, _ placement: Placement) throws(SyncBackendError) -> Bool {
        let dir = (path as NSString).deletingLastPathComponent
        let temp = "\(dir)/.tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw failure("create \(temp)") }
        defer { unlink(temp) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { let e = failure("write \(temp)"); close(fd); throw e }
            offset += n
        }
        guard fsync(fd) == 0 else { let e = failure("fsync \(temp)"); close(fd); throw e }
        close(fd)
        switch placement {
        case .create:
            if link(temp, path) != 0 {
                if errno == EEXIST { return false }
                throw failure("link \(path)")
            }
        case .replace:
            guard rename(temp, path) == 0 else { throw failure("rename to \(path)") }
        }
        syncDirectory(dir)
        return true
    }

    static func read(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }

    static func makeDirectory(_ path: String) throws(SyncBackendError) {
        var built = ""
        for part in path.split(separator: "/") {
            built += "/" + part
            if mkdir(built, 0o700) != 0 && errno != EEXIST { throw failure("mkdir \(built)") }
        }
    }

    private static func syncDirectory(_ dir: String) {
        let fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// A missing or unwritable folder is retryable: a network share or USB stick comes back.
    static func failure(_ what: String) -> SyncBackendError {
        .unavailable("\(what): \(String(cString: strerror(errno)))")
    }
}
