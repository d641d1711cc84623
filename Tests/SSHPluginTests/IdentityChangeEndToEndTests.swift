import Foundation
import Testing
import TestSupport

/// Identity changes that span the store and the secrets file, interrupted by another process
/// holding the store's write lock: the command fails, says nothing changed, and the identity
/// still logs in with its old stored key against a real sshd.
@Suite struct IdentityChangeEndToEndTests {
    /// Another process in a write transaction on the store (BEGIN IMMEDIATE), until release().
    final class StoreLock {
        let process: Background
        let input = Pipe()
        init(_ db: String) throws {
            let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
            print("locked", flush=True)
            sys.stdin.read()
            db.execute("ROLLBACK")
            """
            process = try Background("/usr/bin/env", ["python3", "-c", script, db], environment: ProcessInfo.processInfo.environment,
                                     stdin: input.fileHandleForReading)
            let line = process.firstLine()
            guard line == "locked\n" else { throw Shell.Failure(description: "could not lock \(db): \(line) \(process.errorOutput())") }
        }
        /// Ends the transaction: EOF on stdin, or, should another child have inherited the
        /// pipe's write end, SIGKILL after 10 s (the lock dies with the process either way).
        func release() {
            try? input.fileHandleForWriting.close()
            if !Wait.until(timeout: 10, poll: 0.02, { !process.process.isRunning }) {
                kill(process.process.processIdentifier, SIGKILL)
                Issue.record("the lock holder did not see the end of its stdin within 10 s (another process holds the pipe?); killed it")
            }
            process.process.waitUntilExit()
        }
    }

    /// A host 'lab' whose identity 'deploy' keeps its key only in the secrets store (the key
    /// file is deleted, so the default key files cannot log in instead).
    static func storedKeyHost(_ dir: TemporaryDirectory) throws -> SSHHarness {
        let h = try SSHHarness(dir: dir)
        let add = try h.termhost(["identities", "add", "deploy", "--user", NSUserName(), "--store-key", h.key.privatePath])
        #expect(add.status == 0, "\(add.output)")
        try FileManager.default.removeItem(atPath: h.key.privatePath)
        try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", String(h.server.port), "--use-identity", "deploy"])
        #expect(try h.termhost(["exec", "lab", "--", "echo", "before"]).stdout == "before\n")
        return h
    }

    static func secretCount(_ dir: TemporaryDirectory) -> Int {
        let text = (try? String(contentsOfFile: dir.path + "/data/termhost/secrets.json", encoding: .utf8)) ?? ""
        return text.components(separatedBy: "\"sec_").count - 1
    }

    static let db = "/data/termhost/termhost.db"

    @Test func editStoreKeyWhileTheStoreIsLockedKeepsTheOldKeyWorking() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.storedKeyHost(dir)
        defer { h.server.stop() }
        let other = try UserKey(in: dir.sub("other"), name: "id_other")
        #expect(Self.secretCount(dir) == 1)

        let lock = try StoreLock(dir.path + Self.db)
        let edit = try h.termhost(["identities", "edit", "deploy", "--store-key", other.privatePath])
        lock.release()
        #expect(edit.status == 1)
        #expect(edit.stderr.hasPrefix("termhost identities edit: nothing changed: "), "\(edit.output)")
        #expect(edit.stderr.contains("another process holds a lock on it"), "\(edit.stderr)")
        #expect(edit.stderr.hasSuffix("; 'deploy' is as it was\n"), "\(edit.stderr)")
        #expect(edit.stdout.isEmpty)
        // The old stored key still logs in, and the new one written first was removed again.
        let r = try h.termhost(["exec", "lab", "--", "echo", "old-key"])
        #expect(r.stdout == "old-key\n", "\(r.stderr)")
        #expect(Self.secretCount(dir) == 1, "no stray secret is left")

        // Unlocked, the same edit switches the key and deletes the replaced one.
        let again = try h.termhost(["identities", "edit", "deploy", "--store-key", other.privatePath])
        #expect(again.stdout == "Saved identity 'deploy' (key kept in the secrets store).\n", "\(again.stderr)")
        #expect(Self.secretCount(dir) == 1)
    }

    @Test func rmWhileTheStoreIsLockedKeepsTheIdentityAndItsKey() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.storedKeyHost(dir)
        defer { h.server.stop() }

        let lock = try StoreLock(dir.path + Self.db)
        let rm = try h.termhost(["identities", "rm", "deploy"])
        lock.release()
        #expect(rm.status == 1)
        #expect(rm.stderr.hasPrefix("termhost identities rm: nothing changed: "), "\(rm.output)")
        #expect(rm.stderr.hasSuffix("; 'deploy' is as it was\n"), "\(rm.stderr)")
        let r = try h.termhost(["exec", "lab", "--", "echo", "still-here"])
        #expect(r.stdout == "still-here\n", "\(r.stderr)")

        #expect(try h.termhost(["identities", "rm", "deploy"]).stdout == "Removed identity 'deploy'.\n")
        #expect(Self.secretCount(dir) == 0, "removing the identity removes its stored key")
    }

    @Test func addWhileTheStoreIsLockedLeavesNoStraySecret() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        try h.termhost(["hosts", "list"])   // creates the store
        let lock = try StoreLock(dir.path + Self.db)
        let add = try h.termhost(["identities", "add", "deploy", "--store-key", h.key.privatePath])
        lock.release()
        #expect(add.status == 1)
        #expect(add.stderr.hasPrefix("termhost identities add: nothing changed: "), "\(add.output)")
        #expect(Self.secretCount(dir) == 0)
        #expect(try h.termhost(["identities", "list"]).stdout.hasPrefix("No saved identities"))
    }
}
