import CCrypto
import Foundation
import Glibc
import TermhostRegistry
import TermhostSDK

/// Secrets kept apart from the store: one JSON file, mode 0600 in a 0700 directory
/// (`$XDG_DATA_HOME/termhost/secrets.json`), namespaced per plugin, values base64-encoded.
/// Like OpenSSH with private keys, a secrets file readable by others is refused rather than
/// used. Values never reach logs, the store's journal or diagnostics: nothing here logs, and
/// errors name IDs, never values. `path == nil` keeps secrets in memory only (the probe).
public final class SecretsFile: @unchecked Sendable {
    public let path: String?
    private let lock = RecursiveLock()
    /// Only for `path == nil` (in-memory secrets).
    private var memory: [String: [String: String]] = [:]

    /// How long a call waits for another process's lock on the file before it fails (busy).
    let lockWaitMilliseconds: Int

    public init(path: String?, lockWaitMilliseconds: Int = 2000) {
        self.path = path
        self.lockWaitMilliseconds = lockWaitMilliseconds
    }

    public func put(namespace: String, value: [UInt8]) throws(StoreError) -> String {
        var raw = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&raw, 16) == 1 else { throw StoreError(.io, "cannot generate a secret ID: no randomness") }
        let id = "sec_" + raw.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        try exclusive { () throws(StoreError) in
            var all = try load()
            all[namespace, default: [:]][id] = Data(value).base64EncodedString()
            try save(all)
        }
        return id
    }

    public func get(namespace: String, id: String) throws(StoreError) -> [UInt8]? {
        try exclusive { () throws(StoreError) -> [UInt8]? in
            guard let encoded = try load()[namespace]?[id] else { return nil }
            guard let data = Data(base64Encoded: encoded) else {
                throw StoreError(.invalid, "secret \(id) in \(path ?? "memory") is not valid base64; the file was edited by hand")
            }
            return [UInt8](data)
        }
    }

    @discardableResult
    public func remove(namespace: String, id: String) throws(StoreError) -> Bool {
        try exclusive { () throws(StoreError) -> Bool in
            var all = try load()
            guard all[namespace]?.removeValue(forKey: id) != nil else { return false }
            try save(all)
            return true
        }
    }

    /// Runs body holding this process's lock and an flock(2) on `<path>.lock`, so that two
    /// termhost processes never lose each other's writes. The file is read afresh each time.
    /// The lock file is opened with O_NOFOLLOW: a planted (or dangling) symbolic link there
    /// would otherwise make O_CREAT create or truncate whatever file it points to.
    private func exclusive<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try lock.withLock { () throws(StoreError) -> T in
            guard let path else { return try body() }
            try makeDirectory()
            let lockPath = path + ".lock"
            let fd = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                if errno == ELOOP {
                    throw StoreError(.invalid, "'\(lockPath)' is a symbolic link; refused (the lock file is never followed): remove it")
                }
                throw StoreError(.io, "cannot lock secrets '\(path)': \(lockPath): \(String(cString: strerror(errno)))")
            }
            defer { close(fd) }
            var st = stat()
            guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
                throw StoreError(.invalid, "'\(lockPath)' is not a regular file; refused: remove it")
            }
            try waitForLock(fd, lockPath)
            return try body()
        }
    }

    /// Waits at most `lockWaitMilliseconds` for the flock, as the store waits for SQLite's lock:
    /// another process holding it (a stuck `termhost`, a backup tool) makes this call fail with
    /// a message naming the file instead of hanging every command that needs a secret.
    private func waitForLock(_ fd: Int32, _ lockPath: String) throws(StoreError) {
        var waited = 0
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let e = errno
            if e == EINTR { continue }
            guard e == EWOULDBLOCK else {
                throw StoreError(.io, "cannot lock secrets '\(path ?? "")': \(lockPath): \(String(cString: strerror(e)))")
            }
            guard waited < lockWaitMilliseconds else {
                throw StoreError(.busy, "secrets '\(path ?? "")' are locked by another process (\(lockPath) held for over \(lockWaitMilliseconds % 1000 == 0 ? "\(lockWaitMilliseconds / 1000) s" : "\(lockWaitMilliseconds) ms")); nothing was changed: close the other termhost and retry")
            }
            usleep(10_000)
            waited += 10
        }
    }

    /// Creates the file's directory with mode 0700 (never loosening an existing one).
    private func makeDirectory() throws(StoreError) {
        guard let path else { return }
        let dir = PathText.parent(path)
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError(.io, "cannot create the secrets directory '\(dir)': \(String(cString: strerror(errno)))")
        }
    }

    /// Secrets files larger than this are refused (a secret is a key or a password: even
    /// thousands of them fit in far less).
    public static let cap = 16 << 20

    /// Reads the file through one descriptor (no symbolic link, no FIFO, at most `cap` bytes)
    /// and refuses it, saying what is wrong with which file, when it is readable or writable by
    /// anyone but its owner (as OpenSSH refuses a private key), owned by another user, or not
    /// the JSON this class writes. A bad file is never rewritten: put() and remove() fail
    /// too, so nothing stored in it is lost.
    private func load() throws(StoreError) -> [String: [String: String]] {
        guard let path else { return memory }
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: return [:]
            case ELOOP: throw StoreError(.invalid, "secrets '\(path)' is a symbolic link; refused (secrets are read from a regular file only)")
            default: throw StoreError(.io, "cannot read secrets '\(path)': \(String(cString: strerror(errno)))")
            }
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw StoreError(.io, "cannot read secrets '\(path)': \(String(cString: strerror(errno)))") }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw StoreError(.invalid, "secrets '\(path)' is not a regular file; refused")
        }
        if st.st_mode & 0o077 != 0 {
            let mode = String(st.st_mode & 0o777, radix: 8)
            throw StoreError(.invalid, "Permissions 0\(mode) for '\(path)' are too open. Secrets must be readable by their owner only; they are not used until you run: chmod 600 '\(path)'")
        }
        if st.st_uid != geteuid() {
            throw StoreError(.invalid, "secrets '\(path)' is owned by uid \(st.st_uid), not by you (uid \(geteuid())); refused")
        }
        let data: Data
        do { data = try BoundedFile.read(fd: fd, file: path, cap: SecretsFile.cap) } catch {
            throw StoreError(.invalid, "secrets: \(error.description)")
        }
        do {
            return try JSONDocument.decode([String: [String: String]].self, from: data, file: path)
        } catch {
            throw StoreError(.invalid, "secrets \(error.description); the file was left untouched and no secret is read from or written to it until it is fixed")
        }
    }

    /// Writes a new file with mode 0600 from the start, fsyncs it and renames it into place.
    private func save(_ all: [String: [String: String]]) throws(StoreError) {
        guard let path else { memory = all; return }
        try makeDirectory()
        let tmp = path + ".tmp"
        unlink(tmp)
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError(.io, "cannot write secrets \(tmp): \(String(cString: strerror(errno)))") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let bytes = [UInt8]((try? encoder.encode(all)) ?? Data("{}".utf8))
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                close(fd)
                throw StoreError(.io, "cannot write secrets \(tmp): \(String(cString: strerror(errno)))")
            }
            written += n
        }
        fsync(fd)
        close(fd)
        guard rename(tmp, path) == 0 else {
            throw StoreError(.io, "cannot replace secrets \(path): \(String(cString: strerror(errno)))")
        }
    }
}
