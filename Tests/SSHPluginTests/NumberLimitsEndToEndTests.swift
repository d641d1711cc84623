import Foundation
import Testing
import TestSupport

/// Numbers from settings that become libssh2 arguments, poll() milliseconds or a product
/// (keepalive interval x count): out of range they are refused with their name and range,
/// never a crash of the whole termhost process.
@Suite struct NumberLimitsEndToEndTests {
    func run(_ settings: String) throws -> (Shell.Result, SSHHarness, TemporaryDirectory) {
        let dir = TemporaryDirectory()
        let h = try SSHHarness(dir: dir)
        _ = dir.write("policy.json", #"{ "settings": { "org.termhost.ssh": { "# + settings + #" } } }"#)
        let r = try h.termhost(["exec", h.target, "--", "echo", "ran"])
        return (r, h, dir)
    }

    @Test func aHugeConnectTimeoutIsRefusedByName() throws {
        let (r, h, dir) = try run(#""connectTimeout": 3000000"#)
        defer { h.server.stop(); dir.remove() }
        #expect(!r.signaled && r.status == 255, "\(r.stderr)")
        #expect(r.stderr == "ssh: connectTimeout (setting of org.termhost.ssh) must be a whole number of seconds from 1 to 3600, not '3000000'\n")
        #expect(r.stdout.isEmpty)
    }

    @Test func aHugeKeepaliveIntervalIsRefusedBeforeConnecting() throws {
        let (r, h, dir) = try run(#""keepaliveInterval": 5000000000"#)
        defer { h.server.stop(); dir.remove() }
        #expect(!r.signaled && r.status == 255, "\(r.stderr)")
        #expect(r.stderr == "ssh: keepaliveInterval (setting of org.termhost.ssh) must be a whole number of seconds from 0 to 86400, not '5000000000'\n")
        #expect(!h.server.log.contains("Accepted publickey"), "refused before anything was connected")
    }

    @Test func keepaliveCountsOutOfRangeAreRefused() throws {
        for (value, shown) in [("0", "0"), ("1001", "1001"), ("-1", "-1")] {
            let (r, h, dir) = try run(#""keepaliveCountMax": "# + value)
            defer { h.server.stop(); dir.remove() }
            #expect(!r.signaled && r.status == 255, "\(r.stderr)")
            #expect(r.stderr == "ssh: keepaliveCountMax (setting of org.termhost.ssh) must be a whole number of probes from 1 to 1000, not '\(shown)'\n")
        }
    }

    @Test func theLargestKeepaliveValuesStillWork() throws {
        // 86400 s x 1000 probes: the silence limit is computed without overflow and the command runs.
        let (r, h, dir) = try run(#""keepaliveInterval": 86400, "keepaliveCountMax": 1000, "connectTimeout": 3600"#)
        defer { h.server.stop(); dir.remove() }
        #expect(r.status == 0 && r.stdout == "ran\n", "\(r.stderr)")
    }
}
