import Foundation
import Testing
import TestSupport

/// Host keys accepted in Termhost sync (the SSH plugin's `known_hosts` collection) between
/// devices: each device a data directory and a home of its own, separate `termhost` processes,
/// one vault folder, one real sshd.
@Suite struct SyncedKnownHostsEndToEndTests {
    struct Device {
        let dir = TemporaryDirectory()
        let env: [String: String]
        var home: String { dir.sub("home") }
        var db: String { dir.path + "/data/termhost/termhost.db" }

        init(plugins: String, vault: String, userKey: UserKey) throws {
            var env = Fixtures.environment(dir, pluginPath: plugins)
            env["HOME"] = dir.sub("home")
            env.removeValue(forKey: "SSH_AUTH_SOCK")
            self.env = env
            // The same user key on every device (found as ~/.ssh/id_ed25519); no known_hosts file.
            let ssh = dir.sub("home/.ssh")
            try FileManager.default.createDirectory(atPath: ssh, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: userKey.privatePath, toPath: ssh + "/id_ed25519")
            let set = try run("sync", "backend", "set", "folder", vault, "--create")
            #expect(set.status == 0, "\(set.output)")
        }

        @discardableResult
        func run(_ args: String...) throws -> Shell.Result { try Shell.run(Paths.termhost, args, environment: env) }

        /// "accept and save" on a real terminal, as a user would.
        func acceptAndSave(_ target: String) throws {
            let tty = try TmuxSession(command: [Paths.termhost, "exec", target, "--", "echo", "accepted"], environment: env)
            defer { tty.close() }
            tty.waitFor("Choose 1-3:")
            tty.type("2")
            let done = tty.waitFor("[exit")
            #expect(done.contains("accepted") && done.contains("[exit 0]"), "the screen was:\n\(done)")
        }

        var knownHostsFile: String? { try? String(contentsOfFile: home + "/.ssh/known_hosts", encoding: .utf8) }
    }

    let shared = TemporaryDirectory()
    let server: SSHServer
    let userKey: UserKey
    var plugins: String { shared.sub("plugins") }
    var vault: String { shared.sub("vault") }
    var target: String { "\(NSUserName())@127.0.0.1:\(server.port)" }

    init() throws {
        try Fixtures.sshPlugin(in: shared.sub("plugins"))
        _ = try Fixtures.bundle("libSyncPlugin.so", as: "org.termhost.sync", in: shared.sub("plugins"))
        userKey = try UserKey(in: shared.sub("keys"), name: "id_ed25519")
        server = try SSHServer(in: shared, authorizedKeys: [userKey.publicLine])
    }

    func device() throws -> Device { try Device(plugins: plugins, vault: vault, userKey: userKey) }

    /// The server gets a new host key on the same port (a reinstalled host, or an impostor).
    func changeHostKey() throws {
        server.stop()
        let key = server.directory + "/host_key"
        try FileManager.default.removeItem(atPath: key)
        try FileManager.default.removeItem(atPath: key + ".pub")
        try Shell.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key])
        try server.restart()
    }

    func fingerprint() throws -> String {
        let r = try Shell.run("/usr/bin/ssh-keygen", ["-l", "-E", "sha256", "-f", server.directory + "/host_key.pub"])
        return String(r.stdout.split(separator: " ")[1])
    }

    func vaultText() -> String {
        let files = FileManager.default.enumerator(atPath: vault)?.compactMap { $0 as? String } ?? []
        return files.map { (try? String(contentsOfFile: vault + "/" + $0, encoding: .utf8)) ?? "" }.joined()
    }

    @Test func aKeyAcceptedOnOneDeviceIsTrustedOnTheOtherAndAChangedKeyIsRefusedThere() throws {
        defer { server.stop() }
        let a = try device(), b = try device()
        try b.acceptAndSave(target)
        let oldFingerprint = try fingerprint()
        #expect(try b.run("sync", "now").status == 0)
        // The vault holds the key, never the host's name or port in the clear.
        let text = vaultText()
        #expect(text.contains("known_hosts") && !text.contains("127.0.0.1"), "\(text)")
        #expect(try a.run("sync", "now").status == 0)
        let r = try a.run("exec", target, "--", "echo", "trusted")
        #expect(r.stdout == "trusted\n" && r.stderr.isEmpty, "\(r.output)")
        #expect(r.status == 0)
        #expect(a.knownHostsFile == nil, "OpenSSH's file is not written by a synced key")
        let listed = try a.run("known-hosts", "list", "[127.0.0.1]:\(server.port)")
        #expect(listed.stdout.hasSuffix("  ssh-ed25519  \(oldFingerprint)\n"), "\(listed.output)")

        try changeHostKey()
        let changed = try a.run("exec", target, "--", "true")
        #expect(changed.status == 255)
        #expect(changed.stderr.contains("WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!"))
        #expect(changed.stderr.contains(try fingerprint()))
        #expect(changed.stderr.contains("Offending ED25519 key in the synced known hosts (accepted in termhost on a device of the vault): \(oldFingerprint)"))
        #expect(changed.stderr.hasSuffix("Host key verification failed.\n"))
        #expect(!changed.stderr.contains("Choose"), "a changed key is never offered for acceptance")

        // Once the new key is known to be genuine: the synced key is removed, and the host is unknown again.
        let removed = try a.run("known-hosts", "rm", "[127.0.0.1]:\(server.port)")
        #expect(removed.stdout == "Removed 1 synced host key(s) of '[127.0.0.1]:\(server.port)'.\n", "\(removed.output)")
        let unknown = try a.run("exec", target, "--", "true")
        #expect(unknown.stderr.hasPrefix("The authenticity of host '[127.0.0.1]:\(server.port)' can't be established."), "\(unknown.output)")
    }

    @Test func twoDevicesAcceptingDifferentKeysForOneHostAreAConflictNotASilentPick() throws {
        defer { server.stop() }
        let b = try device(), c = try device()
        try b.acceptAndSave(target)
        try changeHostKey()
        try c.acceptAndSave(target)
        #expect(try b.run("sync", "now").status == 0)
        let synced = try c.run("sync", "now")
        #expect(synced.stdout.hasSuffix("; 1 conflict(s): 'termhost sync conflicts'\n"), "\(synced.output)")
        let conflicts = try c.run("sync", "conflicts", "--json")
        #expect(conflicts.stdout.contains("\"record\":\"org.termhost.ssh/known_hosts/"), "\(conflicts.output)")
        #expect(conflicts.stdout.contains("\"reason\":\"changed on both devices\""), "\(conflicts.output)")
        // Until it is resolved, each device keeps the key it accepted.
        #expect(try c.run("exec", target, "--", "echo", "own").stdout == "own\n")
    }

    @Test func twoDevicesAcceptingTheSameKeyDoNotConflict() throws {
        defer { server.stop() }
        let b = try device(), c = try device()
        try b.acceptAndSave(target)
        try c.acceptAndSave(target)
        #expect(try b.run("sync", "now").status == 0)
        let synced = try c.run("sync", "now")
        #expect(synced.status == 0 && !synced.stdout.contains("conflict"), "\(synced.output)")
    }

    @Test func aRevokedKeyStaysRefusedThoughASyncedRecordTrustsIt() throws {
        defer { server.stop() }
        let a = try device(), b = try device()
        try b.acceptAndSave(target)
        #expect(try b.run("sync", "now").status == 0)
        #expect(try a.run("sync", "now").status == 0)
        _ = a.dir.write("home/.ssh/known_hosts", "@revoked * \(server.hostPublicKey)\n")
        let r = try a.run("exec", target, "--", "true")
        #expect(r.status == 255)
        #expect(r.stderr.contains("WARNING: REVOKED HOST KEY DETECTED!"))
        #expect(r.stderr.contains("is marked as revoked in \(a.home)/.ssh/known_hosts:1"))
    }

    /// The user's own known_hosts wins: a synced record (written by anyone able to write the
    /// vault) never outvotes a different key of its type that a file lists for the host.
    @Test func aDifferentKeyInTheUsersKnownHostsIsAChangedKeyThoughASyncedRecordHoldsTheServersKey() throws {
        defer { server.stop() }
        let a = try device(), b = try device()
        try b.acceptAndSave(target)
        #expect(try b.run("sync", "now").status == 0)
        #expect(try a.run("sync", "now").status == 0)
        let otherKey = a.dir.sub("other") + "/host_key"
        try Shell.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", otherKey])
        let other = try String(contentsOfFile: otherKey + ".pub", encoding: .utf8).split(separator: " ").prefix(2).joined(separator: " ")
        _ = a.dir.write("home/.ssh/known_hosts", "[127.0.0.1]:\(server.port) \(other)\n")
        let r = try a.run("exec", target, "--", "true")
        #expect(r.status == 255)
        #expect(r.stderr.contains("WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!"), "\(r.output)")
        #expect(r.stderr.contains("Offending ED25519 key in \(a.home)/.ssh/known_hosts:1"), "\(r.output)")
        #expect(r.stderr.hasSuffix("Host key verification failed.\n"))
    }

    @Test func aSyncedRecordThatCannotBeDecodedIsIgnoredWithAWarningAndNeverTrusted() throws {
        defer { server.stop() }
        let b = try device()
        try b.acceptAndSave(target)
        try FileManager.default.removeItem(atPath: b.home + "/.ssh/known_hosts")
        // The record's key type no longer matches its key data (a damaged or forged record).
        let keys = try Shell.run("/usr/bin/sqlite3", [b.db, "SELECT key FROM items WHERE collection = 'known_hosts'"])
        let recordKey = keys.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(recordKey.hasSuffix("/ssh-ed25519"), "\(keys.output)")
        let update = try Shell.run("/usr/bin/sqlite3", [b.db, "UPDATE items SET value = CAST(replace(CAST(value AS TEXT), '\"type\":\"ssh-ed25519\"', '\"type\":\"ssh-rsa\"') AS BLOB) WHERE collection = 'known_hosts'"])
        #expect(update.status == 0, "\(update.output)")
        let r = try b.run("exec", target, "--", "true")
        #expect(r.status == 255)
        #expect(r.stderr.contains("synced known hosts record '\(recordKey)': the value's type is not the key type of the record key; ignored"), "\(r.output)")
        #expect(r.stderr.contains("The authenticity of host '[127.0.0.1]:\(server.port)' can't be established."))
    }
}
