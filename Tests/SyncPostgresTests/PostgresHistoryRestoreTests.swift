import Foundation
import Testing
import TestSupport

/// History and restore on a team vault in a real PostgreSQL: a forwarding rule (keyed by an
/// ID, named by its name) and a monitor removed by one member come back from another's
/// device with `forward restore NAME` and `metrics restore HOST`; versions carry the server's
/// time and sequence; a purge keeps only each live record's current version.
final class PostgresHistoryRestoreTests {
    let team: PostgresTeam

    init() throws {
        team = try PostgresTeam(syncPlugins: true)
        _ = try Fixtures.bundle("libMetricsPlugin.so", as: "org.termhost.metrics", in: team.plugins)
    }

    deinit {
        team.remove()
    }

    func synced(_ d: TermhostDevice) throws {
        let r = try d.run("sync", "now")
        #expect(r.status == 0, "\(r.output)")
    }

    func history(_ d: TermhostDevice, _ record: String) throws -> [[String: Any]] {
        let r = try d.run("sync", "history", record, "--json")
        #expect(r.status == 0, "\(r.output)")
        return (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []
    }

    @Test func aRemovedRuleAndMonitorComeBackFromAnotherMembersDevice() throws {
        let a = try team.memberDevice("alice"), b = try team.memberDevice("bob")
        #expect(try a.run("hosts", "add", "db", "db.internal").status == 0)
        let added = try a.run("forward", "add", "--name", "pg", "db", "-L", "15432:localhost:5432")
        #expect(added.status == 0, "\(added.output)")
        #expect(try a.run("metrics", "add", "db", "--interval", "5").status == 0)
        try synced(a)
        try synced(b)
        #expect(try b.run("forward", "rm", "pg").status == 0)
        #expect(try b.run("metrics", "rm", "db").status == 0)
        try synced(b)
        try synced(a)
        #expect(try a.run("forward", "show", "pg").status != 0)

        // Named by its name, though keyed by an ID; numbered by the vault's sequence, timed by
        // the server's clock, newest first.
        let versions = try history(a, "rules/pg")
        #expect(versions.map { $0["change"] as? String } == ["deleted", "saved"], "\(versions)")
        let numbers = versions.compactMap { $0["version"] as? Int }
        #expect(numbers.count == 2 && numbers[0] > numbers[1])
        #expect(versions.allSatisfy { ($0["server_time"] as? Double).map { abs($0 - Date().timeIntervalSince1970) < 600 } == true }, "\(versions)")

        let rule = try a.run("forward", "restore", "pg")
        #expect(rule.status == 0, "\(rule.output)")
        let monitor = try a.run("metrics", "restore", "db")
        #expect(monitor.status == 0, "\(monitor.output)")
        try synced(b)
        let shown = try b.run("forward", "show", "pg")
        #expect(shown.status == 0 && shown.stdout.contains("15432"), "\(shown.output)")
        #expect(try b.run("metrics", "list", "--json").stdout.contains("\"db\""))

        // A purge keeps each live record's current version only.
        #expect(try a.run("sync", "purge", "--force").status == 0)
        let kept = try history(a, "rules/pg")
        #expect(kept.count == 1 && kept.first?["change"] as? String == "saved", "\(kept)")
        #expect(try history(a, "monitors/db").count == 1)
    }
}
