import CSQLite
import Foundation
import Testing
import TermhostServices
import TestSupport

@Suite struct SQLiteStoreTests {
    @Test func valuesAreNamespacedPerPluginAndListedInKeyOrder() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try SQLiteStore(path: dir.path + "/t.db")
        try store.put(namespace: "org.a", collection: "hosts", key: "web2", value: Array("2".utf8))
        try store.put(namespace: "org.a", collection: "hosts", key: "web1", value: Array("1".utf8))
        try store.put(namespace: "org.a", collection: "hosts", key: "db%_1", value: Array("x".utf8))
        try store.put(namespace: "org.b", collection: "hosts", key: "web1", value: Array("other".utf8))
        #expect(try store.get(namespace: "org.b", collection: "hosts", key: "web1") == Array("other".utf8))
        #expect(try store.get(namespace: "org.a", collection: "hosts", key: "web1") == Array("1".utf8))
        #expect(try store.get(namespace: "org.a", collection: "nope", key: "web1") == nil)
        var keys: [String] = []
        try store.list(namespace: "org.a", collection: "hosts", prefix: "web") { key, _ in keys.append(key); return true }
        #expect(keys == ["web1", "web2"])
        keys = []
        try store.list(namespace: "org.a", collection: "hosts", prefix: "db%") { key, _ in keys.append(key); return true }
        #expect(keys == ["db%_1"])
    }

    @Test func journalRecordsPutsAndKeepsTombstones() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try SQLiteStore(path: dir.path + "/t.db")
        try store.put(namespace: "org.a", collection: "c", key: "k", value: [1])
        try store.put(namespace: "org.a", collection: "c", key: "k", value: [2])
        #expect(try store.remove(namespace: "org.a", collection: "c", key: "k"))
        #expect(try !store.remove(namespace: "org.a", collection: "c", key: "k"))
        var rows: [SQLiteStore.JournalRow] = []
        try store.journal(after: 0) { rows.append($0); return true }
        #expect(rows.map(\.operation) == ["put", "put", "delete"])
        #expect(rows.map(\.sequence) == [1, 2, 3])
        #expect(rows.allSatisfy { $0.namespace == "org.a" && $0.collection == "c" && $0.key == "k" })
        var later: [Int64] = []
        try store.journal(after: 2) { later.append($0.sequence); return true }
        #expect(later == [3])
    }

    @Test func failedTransactionRollsBackValuesAndJournal() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try SQLiteStore(path: dir.path + "/t.db")
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try store.transaction {
                try store.put(namespace: "n", collection: "c", key: "a", value: [1])
                try store.transaction { try store.put(namespace: "n", collection: "c", key: "b", value: [2]) }
                throw Boom()
            }
        }
        #expect(try store.get(namespace: "n", collection: "c", key: "a") == nil)
        #expect(try store.get(namespace: "n", collection: "c", key: "b") == nil)
        var count = 0
        try store.journal(after: 0) { _ in count += 1; return true }
        #expect(count == 0)
        try store.transaction { try store.put(namespace: "n", collection: "c", key: "a", value: [1]) }
        #expect(try store.get(namespace: "n", collection: "c", key: "a") == [1])
    }

    @Test func storeUsesWALAndRecordsItsSchemaVersion() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/t.db"
        do { let s = try SQLiteStore(path: path); #expect(s.schemaVersion == 1) }
        let r = try Shell.run("/usr/bin/sqlite3", [path, "PRAGMA journal_mode; PRAGMA user_version;"])
        #expect(r.stdout.split(separator: "\n") == ["wal", "1"])
        // Reopening does not migrate again and keeps the data.
        let s = try SQLiteStore(path: path)
        try s.put(namespace: "n", collection: "c", key: "k", value: [9])
        #expect(try SQLiteStore(path: path).get(namespace: "n", collection: "c", key: "k") == [9])
    }

    @Test func corruptFileIsAnErrorNamingItAndIsNeverRecreated() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/termhost.db"
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        _ = FileManager.default.createFile(atPath: path, contents: garbage)
        #expect { try SQLiteStore(path: path) } throws: { error in
            let e = error as! StoreError
            return e.message.contains(path) && e.message.contains("file is not a database")
        }
        #expect(FileManager.default.contents(atPath: path) == garbage, "the corrupt file must be left as it was")
    }

    @Test func newerSchemaIsRefusedWithTheVersions() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/t.db"
        _ = try SQLiteStore(path: path)
        try Shell.run("/usr/bin/sqlite3", [path, "PRAGMA user_version = 7;"])
        #expect(throws: StoreError(.invalid, "the store \(path) has schema version 7 but this host knows only up to 1; it was written by a newer Termhost, which is needed to open it")) {
            try SQLiteStore(path: path)
        }
    }

    @Test func lockedStoreFailsWithBusyNamingTheFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/locked.db"
        var other: OpaquePointer?
        #expect(sqlite3_open(path, &other) == SQLITE_OK)
        defer { sqlite3_close(other) }
        #expect(sqlite3_exec(other, "CREATE TABLE t(x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);", nil, nil, nil) == SQLITE_OK)
        #expect { try SQLiteStore(path: path, busyTimeoutMilliseconds: 100) } throws: { error in
            let e = error as! StoreError
            return e.kind == .busy && e.message.hasPrefix("store \(path): ") && e.message.contains("database is locked")
        }
        sqlite3_exec(other, "COMMIT", nil, nil, nil)
        #expect(throws: Never.self) { try SQLiteStore(path: path) }
    }

    @Test func writeWhileAnotherProcessHoldsTheWriteLockIsBusy() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/t.db"
        let store = try SQLiteStore(path: path, busyTimeoutMilliseconds: 100)
        var other: OpaquePointer?
        sqlite3_open(path, &other)
        defer { sqlite3_close(other) }
        #expect(sqlite3_exec(other, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        #expect { try store.put(namespace: "n", collection: "c", key: "k", value: [1]) } throws: { error in
            (error as! StoreError).kind == .busy
        }
        sqlite3_exec(other, "ROLLBACK", nil, nil, nil)
        try store.put(namespace: "n", collection: "c", key: "k", value: [1])
    }

    /// A relative store path whose directories do not exist yet is diagnosed against the working
    /// directory (walking up its parents once looped forever at "").
    // 3 minutes: a whole-suite run on a loaded 2-core machine starved it past 1.
    @Test(.timeLimit(.minutes(3))) func aRelativeStorePathIsDiagnosedAgainstTheWorkingDirectory() {
        let diagnosis = SQLiteStore.diagnose(path: "termhost-missing-\(getpid())/deeper/termhost.db")
        let workingDirectoryWritable = access(".", W_OK | X_OK) == 0
        #expect((diagnosis == nil) == workingDirectoryWritable, "\(diagnosis ?? "nil")")
    }
}
