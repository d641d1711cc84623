import Foundation
import Testing
import TestSupport

/// A device whose PostgreSQL server is down when it syncs, on the real binary: the error names
/// the vault once, and the changes waiting for the server are counted although it was never
/// reached.
final class PostgresServerDownTests {
    let team: PostgresTeam
    var socket: String { team.server.socketDirectory }

    init() throws {
        team = try PostgresTeam(syncPlugins: true)
    }

    deinit {
        team.remove()
    }

    func device(_ user: String) throws -> TermhostDevice { try team.memberDevice(user) }

    @Test func aServerDownIsNamedOnceAndTheChangesWaitingForItAreCounted() throws {
        let a = try device("alice"), b = try device("bob")
        #expect(try a.run("sync", "now").status == 0)
        try a.run("hosts", "add", "web", "web.example.com")
        try a.run("hosts", "add", "db", "db.example.com")
        team.server.stop()
        let failed = try a.run("sync", "now")
        #expect(failed.status == 1)
        let vault = "postgresql alice@[\(socket)]:5432/termhost vault 'team' (Unix socket)"
        #expect(failed.stderr.hasPrefix("termhost sync: \(vault): connection to server"), "\(failed.stderr)")
        #expect(failed.stderr.components(separatedBy: vault).count == 2, "\(failed.stderr)")
        #expect(!failed.stderr.contains("PostgreSQL"), "\(failed.stderr)")
        // libpq's two-line message, on one line: no escaped line end or tab shown.
        #expect(!failed.stderr.contains("\\012") && !failed.stderr.contains("\\011") && failed.stderr.split(separator: "\n").count == 1,
                "\(failed.stderr)")
        let status = try a.run("sync", "status").stdout
        #expect(status.contains("pending changes: 2\n"), "\(status)")
        #expect(status.contains("last error: \(vault): connection to server"), "\(status)")
        #expect(status.components(separatedBy: vault).count == 3, "\(status)")   // the backend line and the error

        // The state commands answer in JSON when asked.
        #expect(try a.run("sync", "pause", "--json").stdout == "{\"paused\":true}\n")
        #expect(try a.run("sync", "resume", "--json").stdout == "{\"paused\":false}\n")
        #expect(try a.run("sync", "reset", "--json").stdout == "{\"reset\":true}\n")

        try team.server.restart()
        #expect(try a.run("sync", "now").status == 0)
        #expect(try a.run("sync", "status").stdout.contains("pending changes: 0\n"))
        #expect(try b.run("sync", "now").status == 0)
        for host in ["web", "db"] { #expect(try b.run("hosts", "show", host).status == 0) }
    }
}
