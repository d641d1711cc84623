import Foundation
import Testing
import TestSupport

/// get_metrics through `termhost tools call`, against a real sshd on loopback (the machine's
/// own processes are the host's).
@Suite struct MetricsToolEndToEndTests {
    static func lab(_ dir: TemporaryDirectory, trustServer: Bool = true) throws -> SSHHarness {
        let h = try SSHHarness.metrics(dir: dir, trustServer: trustServer)
        let add = try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName(),
                                  "--identity", h.key.privatePath])
        #expect(add.status == 0, "\(add.output)")
        return h
    }

    static func hosts(_ r: Shell.Result) -> [[String: Any]] {
        let o = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [String: Any]
        return o?["hosts"] as? [[String: Any]] ?? []
    }

    @Test func aSnapshotPerHostWithAtMostTwentyProcesses() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        // More processes than the cap, whatever else the machine runs.
        let sleepers = (0..<25).map { _ in Shell.spawnBackground("/bin/sleep", ["120"]) }
        defer { sleepers.forEach(Shell.stopBackground) }
        let r = try h.termhost(["tools", "call", "get_metrics", #"{"hosts":["lab"]}"#])
        #expect(r.status == 0, "\(r.output)")
        let snapshot = Self.hosts(r).first ?? [:]
        #expect(snapshot["host"] as? String == "lab")
        #expect(snapshot["state"] as? String == "live", "\(r.stdout)")
        let processes = snapshot["processes"] as? [String: Any] ?? [:]
        #expect((processes["count"] as? Int ?? 0) > 25)
        #expect((processes["top"] as? [Any])?.count == 20)
        #expect(snapshot["advice"] is NSNull)
        #expect(snapshot["gpus"] != nil, "unknown sections are present, as null")
    }

    @Test func anUnknownHostKeyIsAFailedSnapshotThatSaysWhatToRun() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir, trustServer: false)
        defer { h.server.stop() }
        let r = try h.termhost(["tools", "call", "get_metrics", #"{"hosts":["lab"]}"#])
        #expect(r.status == 0, "\(r.output)")
        let snapshot = Self.hosts(r).first ?? [:]
        #expect(snapshot["state"] as? String == "failed")
        #expect(snapshot["advice"] as? String == "run 'termhost ssh lab' on a terminal to review its host key and save it")
        #expect(h.knownHosts.isEmpty)
    }

    @Test(arguments: [#"{"hosts":[]}"#, #"{"hosts":["-oProxyCommand=true"]}"#, #"{"hosts":["me@127.0.0.1"]}"#])
    func hostListsOutOfRangeOrNotHostIDsAreRefused(_ arguments: String) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Self.lab(dir)
        defer { h.server.stop() }
        let r = try h.termhost(["tools", "call", "get_metrics", arguments])
        #expect(r.status == 2, "\(r.output)")
        #expect(r.stderr.contains("get_metrics: "), "\(r.stderr)")
    }
}
