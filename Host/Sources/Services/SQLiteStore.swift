import CSQLite
import Foundation
import TermhostRegistry
import TermhostSDK

/// The host store: one SQLite file (`$XDG_DATA_HOME/termhost/termhost.db`) in WAL mode with
/// versioned migrations, key/value collections namespaced per plugin, transactions, and a
/// change journal that a sync feature can replicate.
///
/// A store that fails to open (corrupt, locked, unreadable, newer schema) is an error that
/// names the file; it is never deleted or silently recreated, so nothing is lost.
/// Thread-safety: one connection behind a recursive lock; a transaction body's calls on the same
/// thread join it, other threads wait.
public final class SQLiteStore: @unchecked Sendable {
    public let path: String
    private let db: OpaquePointer
    private let lock = RecursiveLock()
    private var transactionDepth = 0

    /// Migrations, in order; `PRAGMA user_version` records how many ran. Append only.
    static let migrations: [String] = [
        """
        CREATE TABLE items (
            namespace TEXT NOT NULL, collection TEXT NOT NULL, key TEXT NOT NULL,
            value BLOB NOT NULL, updated_at REAL NOT NULL,
            PRIMARY KEY (namespace, collection, key)) WITHOUT ROWID;
        CREATE TABLE journal (
            sequence INTEGER PRIMARY KEY AUTOINCREMENT,
            namespace TEXT NOT NULL, collection TEXT NOT NULL, key TEXT NOT NULL,
            operation TEXT NOT NULL CHECK (operation IN ('put', 'delete')),
            at REAL NOT NULL);
        """,
    ]

    /// Opens (creating if absent) the store at path. `:memory:` gives a private in-memory store.
    public init(path: String, busyTimeoutMilliseconds: Int32 = 2000) throws(StoreError) {
        self.path = path
        if path != ":memory:" {
            let dir = PathText.parent(path)
            if let reason = SQLiteStore.makeDirectories(dir) {
                throw StoreError(.io, "cannot create the store's directory \(dir): \(reason)")
            }
            // Private whatever the umask: created 0600 here (SQLite gives its -wal and -shm the
            // database's mode), and refused when someone else could have written it.
            if let problem = PrivateFile.prepare(directory: dir) ?? PrivateFile.prepare(file: path)
                ?? PrivateFile.prepare(existingFile: path + "-wal") ?? PrivateFile.prepare(existingFile: path + "-shm") {
                throw StoreError(.io, "the store: \(problem)")
            }
        }
        var handle: OpaquePointer?
        // NOFOLLOW: the store is never opened through a symbolic link (one planted at its name
        // would make SQLite create or write the file it points to).
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let msg = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close(handle)
            throw StoreError(.io, "cannot open the store \(path): \(msg)")
        }
        db = handle
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        do {
            try migrate()
        } catch {
            sqlite3_close(db)
            throw error
        }
    }

    deinit { sqlite3_close(db) }

    /// mkdir -p with mode 0700; the strerror text of the first failure, or nil.
    static func makeDirectories(_ dir: String) -> String? {
        var path = ""
        for part in dir.split(separator: "/") {
            path += "/" + part
            if mkdir(path, 0o700) != 0 && errno != EEXIST { return String(cString: strerror(errno)) }
        }
        return nil
    }

    /// Why the store at path could not be opened, or nil if it can (or does not exist yet and
    /// can be created). Read-only: diagnosing never creates, migrates or changes anything.
    public static func diagnose(path: String) -> String? {
        for file in [PathText.parent(path), path, path + "-wal", path + "-shm"] {
            if let refused = PrivateFile.refusal(at: file) { return "the store: \(refused)" }
        }
        guard FileManager.default.fileExists(atPath: path) else {
            // The first start will create it: check that the nearest existing directory lets us.
            var dir = PathText.parent(path)
            // A relative path's parents end in "", the working directory.
            while !dir.isEmpty && dir != "/" && !FileManager.default.fileExists(atPath: dir) { dir = PathText.parent(dir) }
            if dir.isEmpty { dir = "." }
            return access(dir, W_OK | X_OK) == 0 ? nil
                : "cannot create the store \(path): \(dir) is not writable (\(String(cString: strerror(errno))))"
        }
        var handle: OpaquePointer?
        defer { sqlite3_close(handle) }
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW, nil) == SQLITE_OK, let handle else {
            return "cannot open the store \(path): \(handle.map { String(cString: sqlite3_errmsg($0)) } ?? "unknown error")"
        }
        sqlite3_busy_timeout(handle, 200)
        var stmt: OpaquePointer?
        defer { sqlite3_finalize(stmt) }
        var rc = sqlite3_prepare_v2(handle, "SELECT (SELECT count(*) FROM sqlite_master), (SELECT user_version FROM pragma_user_version)", -1, &stmt, nil)
        if rc == SQLITE_OK { rc = sqlite3_step(stmt) }
        guard rc == SQLITE_ROW else {
            return "store \(path): read: \(String(cString: sqlite3_errmsg(handle))) (SQLite code \(rc))"
        }
        let version = Int(sqlite3_column_int64(stmt, 1))
        if version < 0 {
            return "the store \(path) has schema version \(version), which no Termhost writes; it is not a Termhost store (left untouched)"
        }
        if version > migrations.count {
            return "the store \(path) has schema version \(version) but this host knows only up to \(migrations.count); it was written by a newer Termhost, which is needed to open it"
        }
        return nil
    }

    private func migrate() throws(StoreError) {
        // The first read tells a corrupt or foreign file apart before anything is written.
        let version = try queryInt("PRAGMA user_version")
        if path != ":memory:" {
            let mode = try queryText("PRAGMA journal_mode=WAL")
            guard mode == "wal" else { throw StoreError(.io, "cannot switch the store \(path) to WAL mode (got \(mode))") }
        }
        try exec("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL")
        // user_version is any 32-bit number a file can hold; a negative one is no Termhost store
        // (and would trap as a count of migrations already run).
        guard version >= 0 else {
            throw StoreError(.invalid, "the store \(path) has schema version \(version), which no Termhost writes; it is not a Termhost store (left untouched)")
        }
        guard version <= SQLiteStore.migrations.count else {
            throw StoreError(.invalid, "the store \(path) has schema version \(version) but this host knows only up to \(SQLiteStore.migrations.count); it was written by a newer Termhost, which is needed to open it")
        }
        for (i, sql) in SQLiteStore.migrations.enumerated().dropFirst(Int(version)) {
            try exec("BEGIN IMMEDIATE")
            do {
                try exec(sql)
                try exec("PRAGMA user_version = \(i + 1)")
                try exec("COMMIT")
            } catch {
                try? exec("ROLLBACK")
                throw StoreError(error.kind, "migration \(i + 1) of the store \(path) failed: \(error.message)")
            }
        }
    }

    public var schemaVersion: Int { (try? queryInt("PRAGMA user_version")) ?? 0 }

    // MARK: - Key/value API (namespace = calling plugin's ID)

    public func put(namespace: String, collection: String, key: String, value: [UInt8]) throws(StoreError) {
        try write { () throws(StoreError) in
            try run("INSERT INTO items (namespace, collection, key, value, updated_at) VALUES (?, ?, ?, ?, ?) " +
                    "ON CONFLICT (namespace, collection, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                    [.text(namespace), .text(collection), .text(key), .blob(value), .real(Date().timeIntervalSince1970)])
            try journal(namespace, collection, key, "put")
        }
    }

    public func get(namespace: String, collection: String, key: String) throws(StoreError) -> [UInt8]? {
        try lock.withLock { () throws(StoreError) in
            var result: [UInt8]? = nil
            try query("SELECT value FROM items WHERE namespace = ? AND collection = ? AND key = ?",
                      [.text(namespace), .text(collection), .text(key)]) { stmt in
                result = SQLiteStore.blob(stmt, 0)
                return false
            }
            return result
        }
    }

    /// Removes the key and journals a tombstone. Returns false when the key was absent.
    @discardableResult
    public func remove(namespace: String, collection: String, key: String) throws(StoreError) -> Bool {
        try write { () throws(StoreError) -> Bool in
            try run("DELETE FROM items WHERE namespace = ? AND collection = ? AND key = ?",
                    [.text(namespace), .text(collection), .text(key)])
            guard sqlite3_changes(db) > 0 else { return false }
            try journal(namespace, collection, key, "delete")
            return true
        }
    }

    /// Visits entries in key order; the visitor returns false to stop.
    public func list(namespace: String, collection: String, prefix: String,
                     _ visit: (String, [UInt8]) -> Bool) throws(StoreError) {
        try lock.withLock { () throws(StoreError) in
            // Prefix match with substr() rather than LIKE: keys may contain % and _.
            try query("SELECT key, value FROM items WHERE namespace = ? AND collection = ? AND substr(key, 1, ?) = ? ORDER BY key",
                      [.text(namespace), .text(collection), .int(Int64(prefix.utf8.count)), .text(prefix)]) { stmt in
                visit(String(cString: sqlite3_column_text(stmt, 0)), SQLiteStore.blob(stmt, 1))
            }
        }
    }

    public struct JournalRow: Equatable, Sendable {
        public let sequence: Int64
        public let namespace: String
        public let collection: String
        public let key: String
        public let operation: String
    }

    /// Journal rows with sequence > after, oldest first; the visitor returns false to stop.
    public func journal(after: Int64, _ visit: (JournalRow) -> Bool) throws(StoreError) {
        try lock.withLock { () throws(StoreError) in
            try query("SELECT sequence, namespace, collection, key, operation FROM journal WHERE sequence > ? ORDER BY sequence",
                      [.int(after)]) { stmt in
                visit(JournalRow(sequence: sqlite3_column_int64(stmt, 0),
                                 namespace: String(cString: sqlite3_column_text(stmt, 1)),
                                 collection: String(cString: sqlite3_column_text(stmt, 2)),
                                 key: String(cString: sqlite3_column_text(stmt, 3)),
                                 operation: String(cString: sqlite3_column_text(stmt, 4))))
            }
        }
    }

    /// Runs body in one transaction (BEGIN IMMEDIATE ... COMMIT); a thrown error rolls back.
    /// Nested calls on the same thread join the outer transaction.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try lock.withLock { () throws -> T in
            if transactionDepth > 0 {
                transactionDepth += 1
                defer { transactionDepth -= 1 }
                return try body()
            }
            try exec("BEGIN IMMEDIATE")
            transactionDepth = 1
            defer { transactionDepth = 0 }
            do {
                let value = try body()
                try exec("COMMIT")
                return value
            } catch {
                try? exec("ROLLBACK")
                throw error
            }
        }
    }

    private func write<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        do {
            return try transaction { try body() }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.io, "\(error)")
        }
    }

    private func journal(_ ns: String, _ collection: String, _ key: String, _ op: String) throws(StoreError) {
        try run("INSERT INTO journal (namespace, collection, key, operation, at) VALUES (?, ?, ?, ?, ?)",
                [.text(ns), .text(collection), .text(key), .text(op), .real(Date().timeIntervalSince1970)])
    }

    // MARK: - SQLite plumbing

    enum Value { case text(String), blob([UInt8]), int(Int64), real(Double) }

    private func error(_ rc: Int32, _ what: String) -> StoreError {
        let msg = String(cString: sqlite3_errmsg(db))
        let kind: StoreError.Kind = (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED ? .busy : .io
        let hint = kind == .busy ? " (another process holds a lock on it; close it and retry)" : ""
        return StoreError(kind, "store \(path): \(what): \(msg) (SQLite code \(rc))\(hint)")
    }

    private func exec(_ sql: String) throws(StoreError) {
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, "'\(sql.prefix(40))'") }
    }

    private func prepare(_ sql: String, _ params: [Value]) throws(StoreError) -> OpaquePointer {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc, "prepare") }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (i, p) in params.enumerated() {
            let idx = Int32(i + 1)
            switch p {
            case .text(let s): sqlite3_bind_text(stmt, idx, s, -1, transient)
            case .blob(let b):
                guard b.count <= Int(Int32.max) else {
                    sqlite3_finalize(stmt)
                    throw StoreError(.invalid, "a value of \(b.count) bytes is larger than the store \(path) can hold (2 GiB)")
                }
                _ = b.withUnsafeBytes { sqlite3_bind_blob(stmt, idx, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), transient) }
            case .int(let n): sqlite3_bind_int64(stmt, idx, n)
            case .real(let d): sqlite3_bind_double(stmt, idx, d)
            }
        }
        return stmt
    }

    private func run(_ sql: String, _ params: [Value]) throws(StoreError) {
        let stmt = try prepare(sql, params)
        defer { sqlite3_finalize(stmt) }
        let rc = sqlite3_step(stmt)
        guard rc == SQLITE_DONE || rc == SQLITE_ROW else { throw error(rc, "write") }
    }

    private func query(_ sql: String, _ params: [Value], _ row: (OpaquePointer) -> Bool) throws(StoreError) {
        let stmt = try prepare(sql, params)
        defer { sqlite3_finalize(stmt) }
        while true {
            let rc = sqlite3_step(stmt)
            if rc == SQLITE_DONE { return }
            guard rc == SQLITE_ROW else { throw error(rc, "read") }
            if !row(stmt) { return }
        }
    }

    private func queryInt(_ sql: String) throws(StoreError) -> Int {
        var n = 0
        try query(sql, []) { n = Int(sqlite3_column_int64($0, 0)); return false }
        return n
    }

    private func queryText(_ sql: String) throws(StoreError) -> String {
        var s = ""
        try query(sql, []) { s = String(cString: sqlite3_column_text($0, 0)); return false }
        return s
    }

    static func blob(_ stmt: OpaquePointer, _ col: Int32) -> [UInt8] {
        let n = Int(sqlite3_column_bytes(stmt, col))
        guard n > 0, let p = sqlite3_column_blob(stmt, col) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }
}
