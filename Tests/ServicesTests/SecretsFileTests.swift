import Foundation
import Testing
import TermhostServices
import TestSupport

@Suite struct SecretsFileTests {
    @Test func secretsAreKeptInA0600FileNamespacedAndRemovable() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/data/termhost/secrets.json"
        let secrets = SecretsFile(path: path)
        let id = try secrets.put(namespace: "org.a", value: Array("hunter2".utf8))
        #expect(id.hasPrefix("sec_") && id.count == 36)
        let attrs = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attrs[.posixPermissions] as? Int) == 0o600)
        #expect(try SecretsFile(path: path).get(namespace: "org.a", id: id) == Array("hunter2".utf8))
        #expect(try SecretsFile(path: path).get(namespace: "org.b", id: id) == nil)
        #expect(try secrets.remove(namespace: "org.a", id: id))
        #expect(try SecretsFile(path: path).get(namespace: "org.a", id: id) == nil)
    }

    @Test func secretsFileReadableByOthersIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/secrets.json"
        _ = try SecretsFile(path: path).put(namespace: "n", value: [1])
        chmod(path, 0o644)
        #expect(throws: StoreError(.invalid, "Permissions 0644 for '\(path)' are too open. Secrets must be readable by their owner only; they are not used until you run: chmod 600 '\(path)'")) {
            try SecretsFile(path: path).get(namespace: "n", id: "sec_x")
        }
        #expect(throws: StoreError.self) { try SecretsFile(path: path).put(namespace: "n", value: [2]) }
    }

    @Test func aGarbageSecretsFileIsNamedWithThePlaceAndNeverOverwritten() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/secrets.json"
        let garbage = "{\n  \"org.a\": { \"sec_1\": \"aGk=\" },\n  oops\n}\n"
        _ = dir.write("secrets.json", garbage)
        chmod(path, 0o600)
        let secrets = SecretsFile(path: path)
        #expect(throws: StoreError(.invalid, "secrets \(path):3:3: malformed JSON: Invalid value; the file was left untouched and no secret is read from or written to it until it is fixed")) {
            try secrets.get(namespace: "org.a", id: "sec_1")
        }
        #expect(throws: StoreError.self) { try secrets.put(namespace: "org.a", value: [1]) }
        #expect(throws: StoreError.self) { try secrets.remove(namespace: "org.a", id: "sec_1") }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == garbage, "nothing of a bad file is lost")
        _ = dir.write("secrets.json", #"{ "org.a": { "sec_1": 7 } }"#)
        chmod(path, 0o600)
        #expect(throws: StoreError(.invalid, "secrets \(path): field 'org.a.sec_1': expected a string; the file was left untouched and no secret is read from or written to it until it is fixed")) {
            try secrets.get(namespace: "org.a", id: "sec_1")
        }
    }

    @Test func aLockHeldByAnotherHolderFailsAsBusyInsteadOfHangingAndChangesNothing() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/secrets.json"
        let id = try SecretsFile(path: path).put(namespace: "n", value: [1])
        // flock(2) locks belong to an open file description, so a second open of the lock file
        // conflicts exactly as another process's would.
        let holder = open(path + ".lock", O_RDWR | O_CLOEXEC)
        #expect(holder >= 0 && flock(holder, LOCK_EX) == 0)
        let secrets = SecretsFile(path: path, lockWaitMilliseconds: 100)
        #expect(throws: StoreError(.busy, "secrets '\(path)' are locked by another process (\(path).lock held for over 100 ms); nothing was changed: close the other termhost and retry")) {
            try secrets.put(namespace: "n", value: [2])
        }
        #expect(throws: StoreError.self) { try secrets.remove(namespace: "n", id: id) }
        close(holder)
        #expect(try secrets.get(namespace: "n", id: id) == [1], "the secret is as it was, and usable once the lock is free")
    }

    @Test func aSymbolicLinkAtTheLockOrTheFileIsRefusedAndNothingIsCreatedThroughIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/secrets.json"
        let target = dir.path + "/victim"
        try FileManager.default.createSymbolicLink(atPath: path + ".lock", withDestinationPath: target)
        #expect(throws: StoreError(.invalid, "'\(path).lock' is a symbolic link; refused (the lock file is never followed): remove it")) {
            try SecretsFile(path: path).put(namespace: "n", value: [1])
        }
        #expect(!FileManager.default.fileExists(atPath: target), "O_CREAT must not create the link's target")
        try FileManager.default.removeItem(atPath: path + ".lock")
        let real = dir.write("real.json", "{}")
        chmod(real, 0o600)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: real)
        #expect(throws: StoreError(.invalid, "secrets '\(path)' is a symbolic link; refused (secrets are read from a regular file only)")) {
            try SecretsFile(path: path).get(namespace: "n", id: "sec_x")
        }
    }

    @Test func secretValueNeverReachesTheStoreOrItsJournal() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try SQLiteStore(path: dir.path + "/t.db")
        let secrets = SecretsFile(path: dir.path + "/secrets.json")
        let id = try secrets.put(namespace: "org.a", value: Array("s3cr3t-value".utf8))
        try store.put(namespace: "org.a", collection: "identities", key: "prod", value: Array("{\"password\":\"\(id)\"}".utf8))
        let dump = try Shell.run("/usr/bin/sqlite3", [dir.path + "/t.db", "SELECT CAST(value AS TEXT) FROM items; SELECT * FROM journal;"])
        #expect(dump.stdout.contains(id))
        #expect(!dump.stdout.contains("s3cr3t-value"))
        for f in try FileManager.default.contentsOfDirectory(atPath: dir.path) where f.hasPrefix("t.db") {
            let bytes = FileManager.default.contents(atPath: dir.path + "/" + f) ?? Data()
            #expect(bytes.range(of: Data("s3cr3t-value".utf8)) == nil, "\(f) must not contain the secret")
        }
    }
}

@Suite struct StoreFileTests {
    @Test func aSymbolicLinkAtTheStoresNameIsNotFollowed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let target = dir.path + "/victim.db"
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/termhost.db", withDestinationPath: target)
        #expect(throws: StoreError.self) { try SQLiteStore(path: dir.path + "/termhost.db") }
        #expect(!FileManager.default.fileExists(atPath: target), "SQLite must not create the link's target")
    }
}
