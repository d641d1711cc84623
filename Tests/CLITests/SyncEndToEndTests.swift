import Foundation
import Testing
import TestSupport

/// The Sync plugin on the real binary: two devices are two data directories (two SQLite stores,
/// two secrets files) and separate `termhost` processes sharing one vault folder, with the SSH
/// and Forwarding plugins declaring what syncs.
@Suite struct SyncEndToEndTests {
    typealias Device = TermhostDevice

    let shared = TemporaryDirectory()
    var plugins: String { shared.sub("plugins") }
    var vault: String { shared.sub("vault") }

    init() throws { try TermhostDevice.syncPlugins(in: shared.sub("plugins")) }

    func device(_ extra: [String: String] = [:]) throws -> Device {
        let d = Device(plugins: plugins, extra: extra)
        let set = try d.run("sync", "backend", "set", "folder", vault, "--create")
        #expect(set.status == 0, "\(set.output)")
        return d
    }

    @Test func aHostSavedOnOneDeviceAppearsOnTheOtherAndAStoredKeyDoesNot() throws {
        let a = try device(), b = try device()
        #expect(try a.run("hosts", "add", "web", "web.example.com", "--port", "2222").status == 0)
        let canary = "CANARY-\(UUID().uuidString)"
        let keyFile = a.dir.write("id_test", "-----BEGIN OPENSSH PRIVATE KEY-----\n\(canary)\n-----END OPENSSH PRIVATE KEY-----\n")
        let identity = try a.run("identities", "add", "deploy", "--user", "deploy", "--store-key", keyFile)
        #expect(identity.status == 0, "\(identity.output)")
        let now = try a.run("sync", "now")
        #expect(now.status == 0, "\(now.output)")
        #expect(now.stdout == "synced with folder \(vault)\n")
        #expect(try b.run("sync", "now").status == 0)
        let shown = try b.run("hosts", "show", "web", "--json")
        #expect(shown.stdout.contains("\"web.example.com\""))
        #expect(try b.run("identities", "show", "deploy").stdout.contains("deploy"))
        // The canary: the key's bytes are in A's secrets file (base64) and in no byte of the vault.
        let secrets = try String(contentsOfFile: a.dir.sub("data") + "/termhost/secrets.json", encoding: .utf8)
        #expect(secrets.matches(of: /"([A-Za-z0-9+\/=]{40,})"/).contains { Data(base64Encoded: String($0.1)).map { String(decoding: $0, as: UTF8.self).contains(canary) } ?? false })
        #expect(!vaultText().contains(canary))
        let status = try b.run("sync", "status", "--json")
        #expect(status.stdout.contains("\"pending\":0"))
        #expect(status.stdout.contains("\"last_error\":null"))
    }

    @Test func sameFieldEditedOnTwoDevicesIsAConflictResolvedFromTheCommandLine() throws {
        let a = try device(), b = try device()
        try a.run("hosts", "add", "db", "db.internal")
        try a.run("sync", "now"); try b.run("sync", "now")
        try a.run("hosts", "edit", "db", "--port", "2200")
        try b.run("hosts", "edit", "db", "--port", "2201")
        try a.run("sync", "now")
        let synced = try b.run("sync", "now")
        #expect(synced.stdout.hasSuffix("; 1 conflict(s): 'termhost sync conflicts'\n"))
        let conflicts = try b.run("sync", "conflicts", "--json")
        let id = try #require(conflicts.stdout.firstMatch(of: /"id":"([0-9a-f]+)"/)?.1)
        #expect(conflicts.stdout.contains("\"reason\":\"both devices changed port\""))
        #expect(try b.run("sync", "resolve", String(id), "--keep", "local").status == 0)
        try a.run("sync", "now")
        #expect(try a.run("hosts", "show", "db", "--json").stdout.contains("2201"))
    }

    @Test func aKilledSyncLosesNothingAndDuplicatesNothing() throws {
        let a = try device(), b = try device()
        try a.run("hosts", "add", "web", "web.example.com")
        // The vault is unreachable: the change stays pending, and status says what to do.
        try FileManager.default.createDirectory(atPath: vault, withIntermediateDirectories: true)
        chmod(vault, 0o500)
        let failed = try a.run("sync", "now")
        chmod(vault, 0o700)
        if getuid() != 0 {   // root ignores the mode
            #expect(failed.status == 1)
            let status = try a.run("sync", "status")
            #expect(status.stdout.contains("pending changes: 1"))
            #expect(status.stdout.contains("nothing is lost: changes stay pending and the next sync retries"))
        }
        #expect(try a.run("sync", "now").status == 0)
        #expect(try a.run("sync", "now").status == 0)
        #expect(try b.run("sync", "now").status == 0)
        #expect(try b.run("hosts", "list").stdout.components(separatedBy: "web.example.com").count == 2)
    }

    @Test func clocksDaysApartDoNotOrderWrites() throws {
        let a = try device(["TERMHOST_SYNC_CLOCK_OFFSET": "432000"]), b = try device(["TERMHOST_SYNC_CLOCK_OFFSET": "-432000"])
        try a.run("hosts", "add", "r", "from-a")
        try a.run("sync", "now"); try b.run("sync", "now")
        try b.run("hosts", "edit", "r", "--address", "from-b")
        try b.run("sync", "now"); try a.run("sync", "now")
        #expect(try a.run("hosts", "show", "r", "--json").stdout.contains("from-b"))
        let bad = try Device(plugins: plugins, extra: ["TERMHOST_SYNC_CLOCK_OFFSET": "soon"]).run("sync", "status")
        #expect(bad.stderr == "termhost sync: TERMHOST_SYNC_CLOCK_OFFSET must be a whole number of seconds, not 'soon'\n")
    }

    @Test func aDeviceOfflineWhileOthersPurgeDoesNotBringTheDeleteBack() throws {
        let a = try device(), b = try device(), c = try device()
        try a.run("hosts", "add", "old", "old.example.com")
        try a.run("hosts", "add", "keep", "keep.example.com")
        for d in [a, b, c] { try d.run("sync", "now") }
        try a.run("hosts", "rm", "old")
        try a.run("sync", "now"); try b.run("sync", "now")
        #expect(try a.run("sync", "purge").stdout == "purged 0 deletion(s) from the vault\n")   // c has not seen it
        #expect(try a.run("sync", "purge", "--force").stdout == "purged 1 deletion(s) from the vault\n")
        #expect(try c.run("sync", "now").status == 0)
        #expect(try c.run("hosts", "show", "old").status != 0)
        #expect(try c.run("hosts", "show", "keep").status == 0)
        try a.run("sync", "now")
        #expect(try a.run("hosts", "show", "old").status != 0)
    }

    @Test func SIGKILLBetweenTheLocalCommitAndTheUploadLosesNothingAndDuplicatesNothing() throws {
        let a = try device(), b = try device()
        try a.run("hosts", "add", "web", "web.example.com")
        let status = try a.run("sync", "status", "--json").stdout
        let deviceID = try #require(status.firstMatch(of: /"device":"([0-9a-f]+)"/)?.1)
        // Hold the device's journal lock: the sync commits its pending list, reads the vault,
        // then waits for the lock to upload; it is killed there.
        let deviceDir = "\(vault)/devices/\(deviceID)"
        try FileManager.default.createDirectory(atPath: deviceDir, withIntermediateDirectories: true)
        let lock = open(deviceDir, O_RDONLY | O_DIRECTORY)
        #expect(flock(lock, LOCK_EX) == 0)
        let sync = try Background(Paths.termhost, ["sync", "now"], environment: a.env)
        let pid = sync.process.processIdentifier
        let waiting = Wait.until(timeout: 120) {
            ((try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? "").split(separator: "\n")
                .contains { $0.contains("-> FLOCK") && $0.split(separator: " ").contains("\(pid)") }
        }
        #expect(waiting, "the sync never waited for the journal lock")
        kill(sync.process.processIdentifier, SIGKILL)
        sync.process.waitUntilExit()
        close(lock)
        #expect(try a.run("sync", "status").stdout.contains("pending changes: 1"))
        #expect(try a.run("sync", "now").status == 0)
        #expect(try a.run("sync", "now").status == 0)
        #expect(try b.run("sync", "now").status == 0)
        #expect(try b.run("hosts", "show", "web").status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: deviceDir).filter { $0.hasSuffix(".json") && $0 != "ack.json" } == ["000000000001.json"])
    }

    @Test func aCorruptedJournalFileInTheVaultIsQuarantinedAndKept() throws {
        let a = try device(), b = try device()
        try a.run("hosts", "add", "web", "web.example.com")
        try a.run("sync", "now")
        let bad = "\(vault)/devices/intruder/000000000001.json"
        try FileManager.default.createDirectory(atPath: "\(vault)/devices/intruder", withIntermediateDirectories: true)
        try Data("{\"format\":1,\"device\":\"intruder\",\"index\":1,\"lamport\":-5,\"entries\":[]}".utf8).write(to: URL(fileURLWithPath: bad))
        #expect(try b.run("sync", "now").status == 0)
        #expect(try b.run("hosts", "show", "web").status == 0)
        #expect(try b.run("sync", "status").stdout.contains("quarantined: 1 record(s) in the vault could not be read and were kept aside"))
        #expect(FileManager.default.fileExists(atPath: bad))
    }

    func vaultText() -> String {
        var all = ""
        let e = FileManager.default.enumerator(atPath: vault)
        while let name = e?.nextObject() as? String {
            guard let d = FileManager.default.contents(atPath: "\(vault)/\(name)") else { continue }
            let text = String(decoding: d, as: UTF8.self)
            all += text
            for m in text.matches(of: /"payload":"([A-Za-z0-9+\/=]+)"/) {
                if let decoded = Data(base64Encoded: String(m.1)) { all += String(decoding: decoded, as: UTF8.self) }
            }
        }
        return all
    }
}
