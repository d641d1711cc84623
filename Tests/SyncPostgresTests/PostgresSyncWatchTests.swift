import Foundation
import Testing
import TestSupport

/// `termhost sync watch` on the real binary against a private PostgreSQL server: another
/// device's change arrives through NOTIFY although the interval is a day, and SIGTERM during a
/// sync the frozen server never answers ends the process within the host's bound, the change
/// pending and then sent once.
final class PostgresSyncWatchTests {
    let team: PostgresTeam

    init() throws {
        team = try PostgresTeam(syncPlugins: true)
    }

    deinit {
        team.remove()
    }

    /// A device of `user` on the team vault whose loop syncs once a day unless woken.
    func device(_ user: String) throws -> TermhostDevice {
        try team.memberDevice(user, policy: #"{ "settings": { "org.termhost.sync": { "interval": 86400 } } }"#)
    }

    func pending(_ d: TermhostDevice) throws -> Int? {
        try d.run("sync", "status", "--json").stdout.firstMatch(of: /"pending":([0-9]+)/).flatMap { Int($0.1) }
    }

    @Test func anotherDevicesChangeReachesTheWatchThroughNotify() throws {
        let a = try device("alice"), b = try device("bob")
        let watch = try Background(Paths.termhost, ["sync", "watch", "--json"], environment: a.env)
        let out = CollectedOutput(watch.stdout)
        defer { kill(watch.process.processIdentifier, SIGKILL); watch.process.waitUntilExit() }
        #expect(Wait.until { out.text.contains(#""outcome":"synced""#) }, "\(out.text)")
        try b.run("hosts", "add", "web", "web.example.com")
        #expect(try b.run("sync", "now").status == 0)
        #expect(Wait.until { out.text.contains(#""applied":1"#) }, "\(out.text)")
        #expect(try a.run("hosts", "show", "web").status == 0)
    }

    @Test func SIGTERMDuringASyncWithAFrozenServerExitsWithinTheBoundAndTheChangeIsSentOnce() throws {
        let a = try device("alice"), b = try device("bob")
        let watch = try Background(Paths.termhost, ["sync", "watch", "--json"], environment: a.env)
        let out = CollectedOutput(watch.stdout)
        let pid = watch.process.processIdentifier
        #expect(Wait.until { out.text.contains(#""outcome":"synced""#) }, "\(out.text)")
        try a.run("hosts", "add", "web", "web.example.com")
        let frozen = [team.server.pid] + PostgresSyncLoopTests.children(of: team.server.pid)
        for p in frozen { kill(p, SIGSTOP) }
        var thawed = false
        defer { if !thawed { for p in frozen { kill(p, SIGCONT) } } }
        // Background and back: foreground syncs at once. It records the change as pending,
        // then waits for the server.
        kill(pid, SIGTSTP)
        #expect(Wait.until { CollectedOutput.processState(pid) == "T" })
        kill(pid, SIGCONT)
        #expect(Wait.until { (try? self.pending(a)) == 1 })
        let started = Date()
        kill(pid, SIGTERM)
        watch.process.waitUntilExit()
        #expect(Date().timeIntervalSince(started) < 3)   // the host's shutdown bound
        #expect(watch.process.terminationStatus == 128 + SIGTERM)
        for p in frozen { kill(p, SIGCONT) }
        thawed = true
        #expect(try pending(a) == 1)
        #expect(try a.run("sync", "now").status == 0)
        #expect(try a.run("sync", "now").status == 0)
        #expect(try pending(a) == 0)
        #expect(try b.run("sync", "now").status == 0)
        #expect(try b.run("hosts", "list").stdout.components(separatedBy: "web.example.com").count == 2)
        #expect(try team.server.psql("SELECT count(*) FROM termhost_sync.changes", database: PostgresTeam.database) == "1\n")
    }
}
