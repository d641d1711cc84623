import Foundation
import Testing
import TestSupport

/// The Sync plugin on the real binary against a private PostgreSQL server: every device is its
/// own data directory and separate `termhost` processes, pointed at the team vault through the
/// command line only, each role logging in with its SCRAM password from the secrets store.
final class PostgresSyncEndToEndTests {
    let team: PostgresTeam
    var socket: String { team.server.socketDirectory }

    init() throws {
        team = try PostgresTeam(syncPlugins: true)
    }

    deinit {
        team.remove()
    }

    func settings(_ user: String) -> [String] {
        ["host=\(socket)", "dbname=\(PostgresTeam.database)", "user=\(user)", "vault=team"]
    }

    func device(_ user: String, _ extra: [String: String] = [:]) throws -> TermhostDevice {
        try team.memberDevice(user, extra: extra)
    }

    @Test func aDeviceChosenFromTheCommandLineShowsItsSettingsButNeverThePassword() throws {
        let a = try device("alice")
        let shown = try a.run("sync", "backend", "show")
        #expect(shown.stdout == "postgres connect_timeout=10 dbname=termhost host=\(socket) port=5432 user=alice vault=team\npassword: stored\n")
        let json = try a.run("sync", "backend", "show", "--json").stdout
        #expect(json == "{\"kind\":\"postgres\",\"settings\":{\"connect_timeout\":\"10\",\"dbname\":\"termhost\",\"host\":\"\(socket)\",\"port\":\"5432\",\"user\":\"alice\",\"vault\":\"team\"},\"password\":\"stored\"}\n")
        #expect(try a.run("sync", "now").stdout == "synced with postgresql alice@[\(socket)]:5432/termhost vault 'team' (Unix socket)\n")
        #expect(try a.run("sync", "status").stdout.hasPrefix("backend: postgresql alice@[\(socket)]:5432/termhost vault 'team' (Unix socket)\n"))
        // Without --password-stdin and without a terminal there is no password: SCRAM refuses.
        #expect(try Shell.run(Paths.termhost, ["sync", "backend", "set", "postgres"] + settings("alice"), environment: a.env).status == 0)
        #expect(try a.run("sync", "backend", "show").stdout.hasSuffix("password: none\n"))
        let refused = try a.run("sync", "now")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("password"), "\(refused.stderr)")
    }

    @Test func badSettingsAreRefusedByNameAndNothingChanges() throws {
        let a = TermhostDevice(plugins: team.plugins)
        func set(_ args: [String], stdin: String? = nil) throws -> Shell.Result {
            try Shell.run(Paths.termhost, ["sync", "backend", "set", "postgres"] + args, environment: a.env, stdin: stdin)
        }
        let cases: [([String], String)] = [
            (settings("alice") + ["colour=red"], "unknown PostgreSQL setting 'colour' (known: connect_timeout, dbname, host, port, sslmode, sslrootcert, user, vault)"),
            (settings("alice") + ["port=99999"], "bad port '99999': expected a number from 1 to 65535"),
            (settings("alice") + ["connect_timeout=0"], "bad connect_timeout '0': expected a number from 1 to 300"),
            (settings("alice") + ["sslmode=sometimes"], "bad sslmode 'sometimes': expected one of disable, allow, prefer, require, verify-ca, verify-full"),
            (["host=\(socket)", "user=alice", "vault=team"], "the PostgreSQL backend needs dbname=..."),
            (settings("alice") + ["user=bob"], "user is given twice"),
            (settings("alice") + ["password=Alice-Pw-1"], "the password is not a setting (the process list would show it); give it on stdin with --password-stdin, or run this on a terminal to be asked"),
        ]
        for (args, message) in cases {
            let r = try set(args)
            #expect(r.status == 2)
            #expect(r.stderr == "termhost sync backend set postgres: \(message)\n")
        }
        let empty = try set(settings("alice") + ["--password-stdin"], stdin: "\n")
        #expect(empty.stderr == "termhost sync: --password-stdin read no password (an empty line or no input); leave --password-stdin out for a role without one\n")
        #expect(try a.run("sync", "backend", "set", "folder", "/tmp/v", "--password-stdin").status == 2)
        #expect(try a.run("sync", "backend", "show").stdout.hasPrefix("folder "))
    }

    @Test func settingAnotherBackendRemovesThePasswordFromTheSecretsStore() throws {
        let a = try device("alice")
        let stored = Data(PostgresTeam.members["alice"]!.utf8).base64EncodedString()
        #expect(secretsText(a).contains(stored))
        #expect(try a.run("sync", "backend", "set", "folder", a.dir.sub("vault"), "--create").status == 0)
        #expect(!secretsText(a).contains(stored))
    }

    @Test func concurrentEditsOfDifferentFieldsOnThreeDevicesAllSurvive() throws {
        let a = try device("alice"), b = try device("bob"), c = try device("carol")
        try a.run("hosts", "add", "db", "db.internal")
        for d in [a, b, c] { #expect(try d.run("sync", "now").status == 0) }
        try a.run("hosts", "edit", "db", "--port", "2200")
        try b.run("hosts", "edit", "db", "--address", "db2.internal")
        try c.run("hosts", "edit", "db", "--keepalive", "45")
        for d in [a, b, c, a, b] { #expect(try d.run("sync", "now").status == 0) }
        for d in [a, b, c] {
            let shown = try d.run("hosts", "show", "db", "--json").stdout
            #expect(shown.contains("2200") && shown.contains("db2.internal") && shown.contains("45"), "\(shown)")
            #expect(try d.run("sync", "conflicts").stdout == "no conflicts\n")
        }
    }

    @Test func theSameFieldEditedOnTwoDevicesIsAConflictResolvedFromTheCommandLine() throws {
        let a = try device("alice"), b = try device("bob")
        try a.run("hosts", "add", "db", "db.internal")
        try a.run("sync", "now"); try b.run("sync", "now")
        try a.run("hosts", "edit", "db", "--port", "2200")
        try b.run("hosts", "edit", "db", "--port", "2201")
        try a.run("sync", "now")
        let synced = try b.run("sync", "now")
        #expect(synced.stdout.hasSuffix("; 1 conflict(s): 'termhost sync conflicts'\n"))
        let conflicts = try b.run("sync", "conflicts", "--json")
        #expect(conflicts.stdout.contains("\"reason\":\"both devices changed port\""))
        let id = try #require(conflicts.stdout.firstMatch(of: /"id":"([0-9a-f]+)"/)?.1)
        #expect(try b.run("sync", "resolve", String(id), "--keep", "local").status == 0)
        try a.run("sync", "now")
        #expect(try a.run("hosts", "show", "db", "--json").stdout.contains("2201"))
    }

    @Test func aDeleteAgainstAnEditIsAConflictNotALoss() throws {
        let a = try device("alice"), b = try device("bob")
        try a.run("hosts", "add", "db", "db.internal")
        try a.run("sync", "now"); try b.run("sync", "now")
        try a.run("hosts", "rm", "db")
        try b.run("hosts", "edit", "db", "--address", "db2.internal")
        try a.run("sync", "now"); try b.run("sync", "now")
        #expect(try b.run("sync", "conflicts", "--json").stdout.contains("\"reason\":\"changed here, deleted on another device\""))
        #expect(try b.run("hosts", "show", "db", "--json").stdout.contains("db2.internal"))
    }

    @Test func SIGKILLBetweenTheLocalCommitAndTheUploadLosesNothingAndDuplicatesNothing() throws {
        let a = try device("alice"), b = try device("bob")
        #expect(try a.run("sync", "now").status == 0)
        try a.run("hosts", "add", "web", "web.example.com")
        // Another session holds the vault's row: the sync commits its pending list, pulls,
        // then waits in push for the row lock; it is killed there.
        let holder = try Background(PostgresServer.bin + "/psql",
                                    ["-X", "-h", socket, "-U", PostgresServer.adminUser, "-d", PostgresTeam.database, "-c",
                                     "BEGIN; SELECT 1 FROM termhost_sync.vaults WHERE name = 'team' FOR NO KEY UPDATE; SELECT pg_sleep(600); COMMIT;"],
                                    environment: ["PGPASSWORD": PostgresServer.adminPassword, "PGAPPNAME": "lock-holder", "PATH": "/usr/bin:/bin"])
        #expect(Wait.until(timeout: 120) { activity("application_name = 'lock-holder' AND wait_event = 'PgSleep'") })
        let sync = try Background(Paths.termhost, ["sync", "now"], environment: a.env)
        let waiting = Wait.until(timeout: 120) { activity("application_name = 'termhost-sync' AND wait_event_type = 'Lock'") }
        #expect(waiting, "the sync never waited for the vault's row")
        kill(sync.process.processIdentifier, SIGKILL)
        sync.process.waitUntilExit()
        try team.server.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'termhost-sync'")
        try team.server.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lock-holder'")
        holder.process.waitUntilExit()
        #expect(try a.run("sync", "status").stdout.contains("pending changes: 1"))
        #expect(try a.run("sync", "now").status == 0)
        #expect(try a.run("sync", "now").status == 0)
        #expect(try b.run("sync", "now").status == 0)
        #expect(try b.run("hosts", "list").stdout.components(separatedBy: "web.example.com").count == 2)
        #expect(try team.server.psql("SELECT count(*) FROM termhost_sync.changes", database: PostgresTeam.database) == "1\n")
    }

    @Test func aServerRestartFailsOneSyncClearlyAndLosesNothing() throws {
        let a = try device("alice"), b = try device("bob")
        #expect(try a.run("sync", "now").status == 0)
        try a.run("hosts", "add", "web", "web.example.com")
        team.server.stop()
        let failed = try a.run("sync", "now")
        #expect(failed.status == 1)
        #expect(failed.stderr.hasPrefix("termhost sync: postgresql alice@[\(socket)]:5432/termhost vault 'team' (Unix socket): "), "\(failed.stderr)")
        #expect(failed.stderr.contains("nothing is lost: changes stay pending and the next sync retries"), "\(failed.stderr)")
        #expect(try a.run("sync", "status").stdout.contains("last error: postgresql alice@[\(socket)]:5432/termhost vault 'team' (Unix socket): "))
        try team.server.restart()
        #expect(try a.run("sync", "now").status == 0)
        #expect(try a.run("sync", "status").stdout.contains("pending changes: 0"))
        #expect(try b.run("sync", "now").status == 0)
        #expect(try b.run("hosts", "show", "web").status == 0)
    }

    @Test func clocksDaysApartDoNotOrderWrites() throws {
        let a = try device("alice", ["TERMHOST_SYNC_CLOCK_OFFSET": "432000"]), b = try device("bob", ["TERMHOST_SYNC_CLOCK_OFFSET": "-432000"])
        try a.run("hosts", "add", "r", "from-a")
        try a.run("sync", "now"); try b.run("sync", "now")
        try b.run("hosts", "edit", "r", "--address", "from-b")
        try b.run("sync", "now"); try a.run("sync", "now")
        #expect(try a.run("hosts", "show", "r", "--json").stdout.contains("from-b"))
    }

    @Test func aRowChangedBehindTheFunctionsBackIsQuarantined() throws {
        let a = try device("alice"), b = try device("bob")
        try a.run("hosts", "add", "web", "web.example.com")
        try a.run("hosts", "add", "db", "db.example.com")
        try a.run("sync", "now")
        try team.server.psql("UPDATE termhost_sync.records SET body = '\\x7b22706f7274223a' WHERE key = 'web'", database: PostgresTeam.database)
        #expect(try b.run("sync", "now").status == 0)
        #expect(try b.run("hosts", "show", "db").status == 0)
        #expect(try b.run("hosts", "show", "web").status != 0)
        #expect(try b.run("sync", "status").stdout.contains("quarantined: 1 record(s) in the vault could not be read and were kept aside"))
        #expect(try team.server.psql("SELECT count(*) FROM termhost_sync.records WHERE key = 'web'", database: PostgresTeam.database) == "1\n")
    }

    @Test func aRemovedMembersDeviceFailsAtItsNextSyncWithTheServersReason() throws {
        let a = try device("alice"), b = try device("bob")
        try b.run("hosts", "add", "web", "web.example.com")
        #expect(try b.run("sync", "now").status == 0)
        try team.server.psql("SELECT termhost_sync.remove_member(id, 'bob') FROM termhost_sync.vaults WHERE name = 'team'", database: PostgresTeam.database)
        try b.run("hosts", "add", "db", "db.example.com")
        let refused = try b.run("sync", "now")
        #expect(refused.status == 1)
        let reason = "role \"bob\" is not a member of vault \"team\"; ask one of the vault's owners to add this role back, or choose another vault with 'termhost sync backend set'"
        #expect(refused.stderr.contains(reason), "\(refused.stderr)")
        #expect(try b.run("sync", "status").stdout.contains(reason))
        #expect(try a.run("sync", "now").status == 0)
        #expect(try a.run("hosts", "show", "db").status != 0)
    }

    // MARK: Helpers

    /// Whether pg_stat_activity has a session matching the condition.
    func activity(_ condition: String) -> Bool {
        (try? team.server.psql("SELECT count(*) FROM pg_stat_activity WHERE \(condition)")).map { $0 != "0\n" } ?? false
    }

    func secretsText(_ d: TermhostDevice) -> String {
        (try? String(contentsOfFile: d.dir.path + "/data/termhost/secrets.json", encoding: .utf8)) ?? ""
    }
}
