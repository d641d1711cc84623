import Foundation
import Testing
import TestSupport

/// Purging deletions on a team vault while one device is away: the vault keeps a tombstone
/// until every device has passed it, and a forced purge makes the device that had not
/// reconcile in full, deleting the record instead of uploading it again as new.
final class PostgresPurgeEndToEndTests {
    let team: PostgresTeam

    init() throws {
        team = try PostgresTeam(syncPlugins: true)
    }

    deinit {
        team.remove()
    }

    func device(_ user: String) throws -> TermhostDevice { try team.memberDevice(user) }

    @Test func aDeviceOfflineWhileOthersPurgeDoesNotResurrectTheDelete() throws {
        let a = try device("alice"), b = try device("bob"), c = try device("carol")
        try a.run("hosts", "add", "old", "old.internal")
        try a.run("hosts", "add", "keep", "keep.internal")
        for d in [a, b, c] { #expect(try d.run("sync", "now").status == 0) }
        try a.run("hosts", "rm", "old")
        #expect(try a.run("sync", "now").status == 0)
        #expect(try b.run("sync", "now").status == 0)
        // carol's device is away: an ordinary purge keeps the tombstone it has not seen.
        #expect(try a.run("sync", "purge", "--json").stdout == "{\"purged\":0}\n")
        #expect(try a.run("sync", "purge", "--force", "--json").stdout == "{\"purged\":1}\n")
        // Back, carol's device is behind the fence: it reconciles in full, and 'old', which the
        // vault once had and no longer knows, is deleted there rather than uploaded as new.
        #expect(try c.run("sync", "now").status == 0)
        #expect(try c.run("hosts", "show", "old").status != 0)
        #expect(try c.run("hosts", "show", "keep").status == 0)
        for d in [a, b] {
            #expect(try d.run("sync", "now").status == 0)
            #expect(try d.run("hosts", "show", "old").status != 0)
            #expect(try d.run("hosts", "show", "keep").status == 0)
        }
        #expect(try c.run("sync", "status", "--json").stdout.contains("\"pending\":0"))
    }
}
