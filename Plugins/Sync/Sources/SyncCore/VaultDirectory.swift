import Foundation

/// The files of a folder vault, reached only from the vault's root and never through a
/// symbolic link: every directory and file below the root is opened with openat(2) and
/// O_NOFOLLOW, one component at a time, so a link planted anywhere in the vault (by a peer, by
/// whoever else can write to the share) cannot send a read or a write out of it. The root
/// itself may be a link of this user's (a vault in a synced folder reached through one);
/// `FolderVaultLocation` has vetted where it leads.
///
/// Writes are whole-file and atomic, as a reader (or a crash) never sees half of one: a
/// temporary file in the same directory, fsync, then link(2) (`.create`, which fails instead of
/// replacing) or rename(2) (`.replace`), then fsync of the directory.
///
/// Errors: a link met on the way is `.invalid` naming its path (someone must remove it); a
/// missing or unwritable folder is `.unavailable` (a share or a USB stick comes back).
/// Threading: one instance per backend, used from one thread at a time.
struct VaultDirectory {
    let root: String

    enum Placement {
        /// Fails (returns false) when the name is taken, so two writers never clobber.
        case create
        /// Replaces what is there.
        case replace
    }

    /// What a read found: the bytes, nothing there, or a link (refused, with its path).
    enum Found: Equatable {
        case bytes([UInt8])
        case missing
        case refused(String)
    }

    /// A descriptor of `relative` (a directory below the root, "" for the root), opened without
    /// following any link below the root. The caller closes it.
    func openDirectory(_ relative: String) throws(SyncBackendError) -> Int32 {
        switch walk(relative) {
        case .opened(let fd): return fd
        case .missing(let at): throw VaultDirectory.failure("open \(at)", ENOENT)
        case .failed(let error): throw error
        }
    }

    private enum Walk {
        case opened(Int32)
        case missing(String)
        case failed(SyncBackendError)
    }

    private func walk(_ relative: String) -> Walk {
        let top = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard top >= 0 else { return errno == ENOENT ? .missing(root) : .failed(VaultDirectory.failure("open \(root)")) }
        var fd = top
        var walked = root
        for part in relative.split(separator: "/") {
            walked += "/" + part
            let next = openat(fd, String(part), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let err = errno
            close(fd)
            guard next >= 0 else {
                if err == ENOENT { return .missing(walked) }
                return .failed(VaultDirectory.refusal(walked, errno: err) ?? VaultDirectory.failure("open \(walked)", err))
            }
            fd = next
        }
        return .opened(fd)
    }

    /// Makes `relative` and its missing parents below the root (never the root itself: when the
    /// vault's folder has gone, this fails instead of building a tree where the share should be).
    func makeDirectory(_ relative: String) throws(SyncBackendError) {
        var done = ""
        for part in relative.split(separator: "/") {
            let parent = try openDirectory(done)
            defer { close(parent) }
            if mkdirat(parent, String(part), 0o700) != 0 && errno != EEXIST {
                throw VaultDirectory.failure("mkdir \(path(done.isEmpty ? String(part) : done + "/" + part))")
            }
            done += done.isEmpty ? String(part) : "/" + part
        }
        close(try openDirectory(done))   // a link where the directory should be is refused here
    }

    /// The regular file at `relative`, at most `limit` bytes (more is refused before it is
    /// read whole: a peer's 140 MB file must not cost this device its memory).
    func read(_ relative: String, limit: Int) throws(SyncBackendError) -> Found {
        let (dir, name) = split(relative)
        let parent: Int32
        switch walk(dir) {
        case .opened(let fd): parent = fd
        case .missing: return .missing
        case .failed(.invalid(let why)): return .refused(why)
        case .failed(let error): throw error
        }
        defer { close(parent) }
        let fd = openat(parent, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let err = errno
            if err == ENOENT { return .missing }
            if let refused = VaultDirectory.refusal(path(relative), errno: err) { return .refused(refused.message) }
            throw VaultDirectory.failure("open \(path(relative))", err)
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw VaultDirectory.failure("stat \(path(relative))") }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return .refused("\(path(relative)) is not a regular file: refused") }
        guard st.st_size <= limit else {
            return .refused("\(path(relative)) is \(st.st_size) bytes, more than the \(limit) a vault file may hold: refused unread")
        }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var got = 0
        while got < bytes.count {
            let n = bytes[got...].withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw VaultDirectory.failure("read \(path(relative))") }
            if n == 0 { break }
            got += n
        }
        return .bytes(Array(bytes.prefix(got)))
    }

    /// The names in directory `relative` (nil when it does not exist).
    func list(_ relative: String) throws(SyncBackendError) -> [String]? {
        let fd: Int32
        switch walk(relative) {
        case .opened(let opened): fd = opened
        case .missing: return nil
        case .failed(let error): throw error
        }
        guard let dir = fdopendir(fd) else {
            let err = errno
            close(fd)
            throw VaultDirectory.failure("read \(path(relative))", err)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Writes `bytes` to `relative` atomically. Returns false only for `.create` when the name
    /// is already taken.
    func write(_ bytes: [UInt8], to relative: String, _ placement: Placement) throws(SyncBackendError) -> Bool {
        let (dir, name) = split(relative)
        let parent = try openDirectory(dir)
        defer { close(parent) }
        let temp = ".tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let fd = openat(parent, temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw VaultDirectory.failure("create \(path(dir.isEmpty ? temp : dir + "/" + temp))") }
        defer { unlinkat(parent, temp, 0) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { let e = VaultDirectory.failure("write \(path(relative))"); close(fd); throw e }
            offset += n
        }
        guard fsync(fd) == 0 else { let e = VaultDirectory.failure("fsync \(path(relative))"); close(fd); throw e }
        close(fd)
        switch placement {
        case .create:
            if linkat(parent, temp, parent, name, 0) != 0 {
                if errno == EEXIST { return false }
                throw VaultDirectory.failure("link \(path(relative))")
            }
        case .replace:
            // rename(2) replaces a link itself, never what it points to.
            guard renameat(parent, temp, parent, name) == 0 else { throw VaultDirectory.failure("rename to \(path(relative))") }
        }
        fsync(parent)
        return true
    }

    /// Removes the file at `relative` (a link there is removed, never followed); quiet when
    /// it is already gone.
    func remove(_ relative: String) {
        let (dir, name) = split(relative)
        guard let parent = try? openDirectory(dir) else { return }
        defer { close(parent) }
        unlinkat(parent, name, 0)
    }

    /// Makes the vault's own folder `path` and any missing parent: only when a vault is made on
    /// purpose, the one time a path outside a vault is created.
    static func makeRoot(_ path: String) throws(SyncBackendError) {
        var built = ""
        for part in path.split(separator: "/") {
            built += "/" + part
            if mkdir(built, 0o700) != 0 && errno != EEXIST { throw failure("mkdir \(built)") }
        }
    }

    /// The full path, for messages.
    func path(_ relative: String) -> String { relative.isEmpty ? root : "\(root)/\(relative)" }

    private func split(_ relative: String) -> (dir: String, name: String) {
        guard let slash = relative.lastIndex(of: "/") else { return ("", relative) }
        return (String(relative[..<slash]), String(relative[relative.index(after: slash)...]))
    }

    /// The error for a link met where a directory or file should be: ELOOP (the last
    /// component, O_NOFOLLOW) or ENOTDIR (a link where O_DIRECTORY wanted a directory).
    static func refusal(_ path: String, errno err: Int32) -> SyncBackendError? {
        guard err == ELOOP || err == ENOTDIR else { return nil }
        var st = stat()
        let isLink = lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK
        return .invalid(isLink ? "\(path) is a symbolic link: refused (nothing in a vault is followed out of it); remove it"
                               : "\(path) is not a directory: refused; remove it")
    }

    /// A missing or unwritable folder is retryable: a network share or USB stick comes back.
    static func failure(_ what: String, _ err: Int32 = errno) -> SyncBackendError {
        .unavailable("\(what): \(String(cString: strerror(err)))")
    }
}
