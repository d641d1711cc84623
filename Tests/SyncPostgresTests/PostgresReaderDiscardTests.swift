import Foundation
import SyncCore
import Testing
import TestSupport

/// A member with read-only access edits locally, on the real binary: the sync says the role is
/// read-only and offers `sync discard-local`, which lists the refused changes, then (with
/// `--yes`) drops them, each record back to the vault's copy, and syncing goes on.
final class PostgresReaderDiscardTests {
    let team: PostgresTeam

    init() throws {
        team = try PostgresTeam(syncPlugins: true)
    }

    deinit {
        team.remove()
    }

    @Test func aReadersRefusedChangesAreListedThenDroppedAndSyncingGoesOn() throws {
        let owner = try team.device("alice", "console")
        try owner.setMember(role: "dave", access: .reader)
        owner.close()
        let alice = try team.memberDevice("alice"), dave = try team.memberDevice("dave")
        #expect(try alice.run("hosts", "add", "web", "web.example.com").status == 0)
        #expect(try alice.run("sync", "now").status == 0)
        #expect(try dave.run("sync", "now").status == 0)

        #expect(try dave.run("hosts", "edit", "web", "--port", "2222").status == 0)
        #expect(try dave.run("hosts", "add", "mine", "mine.example.com").status == 0)
        let refused = try dave.run("sync", "now")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("this role is read-only in the vault") && refused.stderr.contains("termhost sync discard-local"),
                "\(refused.stderr)")
        #expect(!refused.stderr.contains("add this role back"), "\(refused.stderr)")

        let listed = try dave.run("sync", "discard-local")
        #expect(listed.status == 0)
        #expect(listed.stdout.contains("2 change(s) not yet sent:") && listed.stdout.contains("org.termhost.ssh/hosts/web")
                && listed.stdout.contains("org.termhost.ssh/hosts/mine"), "\(listed.stdout)")
        #expect(try dave.run("hosts", "show", "mine").status == 0, "listing drops nothing")

        let dropped = try dave.run("sync", "discard-local", "--yes")
        #expect(dropped.status == 0 && dropped.stdout.contains("dropped 2 change(s)"), "\(dropped.output)")
        #expect(try dave.run("hosts", "show", "mine").status != 0, "a record the vault never had is gone")
        #expect(!(try dave.run("hosts", "show", "web").stdout.contains("2222")), "the edit went back to the vault's copy")
        #expect(try dave.run("sync", "now").status == 0)
        #expect(try dave.run("sync", "status").stdout.contains("pending changes: 0\n"))
        // The owner's later change still reaches the reader.
        #expect(try alice.run("hosts", "add", "db", "db.example.com").status == 0)
        #expect(try alice.run("sync", "now").status == 0)
        #expect(try dave.run("sync", "now").status == 0)
        #expect(try dave.run("hosts", "show", "db").status == 0)
    }
}
