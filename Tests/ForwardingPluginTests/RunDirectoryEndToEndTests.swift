import Foundation
import Glibc
import Testing
import TestSupport

/// Where `forward run` leaves its status file and control socket: under `$HOME` when
/// XDG_STATE_HOME is not set (as every other Termhost file), 0700/0600, and never in a
/// directory that is a link or belongs to someone else.
@Suite struct RunDirectoryEndToEndTests {
    @Test func withoutXDGStateHomeTheRunFilesGoUnderHOME() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let echo = EchoServer()
        defer { echo.stop() }
        try h.termhost(["forward", "add", "--name", "web", h.target, "-L", "0:127.0.0.1:\(echo.port)"])
        // The store stays where it is (XDG_DATA_HOME); only the state directory falls back.
        var env = h.environment
        env.removeValue(forKey: "XDG_STATE_HOME")
        let run = try ForwardRun(Paths.termhost, ["forward", "run", "web"], environment: env)
        #expect(run.waitForLine(containing: "forward 'web': active") != nil, "\(run.output)")
        let runs = h.home + "/.local/state/termhost/forwarding"
        let pid = run.process.processIdentifier
        let status = runs + "/run-\(pid).json"
        #expect(Wait.until { access(status, F_OK) == 0 }, "no \(status)")
        #expect(mode(runs) == 0o700)
        #expect(mode(status) == 0o600)
        #expect(access(runs + "/run-\(pid).sock", F_OK) == 0)
        let list = try Shell.run(Paths.termhost, ["forward", "list"], environment: env)
        #expect(list.stdout.contains("active (0 connections)"), "\(list.output)")
        _ = run.interrupt()
        #expect(access(status, F_OK) != 0, "removed at exit")
    }

    @Test func aRunDirectoryThatIsALinkOrSomeoneElsesIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        let echo = EchoServer()
        defer { echo.stop() }
        let runs = dir.path + "/state/termhost/forwarding"
        let elsewhere = dir.sub("elsewhere")
        _ = dir.sub("state/termhost")
        #expect(symlink(elsewhere, runs) == 0)
        let run = try h.run([h.target, "-L", "0:127.0.0.1:\(echo.port)"])
        let line = run.waitForLine(containing: "cannot reach this process")
        #expect(line == "forward: 'forward stop', 'retry' and 'list' cannot reach this process: termhost forward: refusing \(runs): it is a symbolic link (expected a directory of your own)", "\(run.output)")
        // The rules run all the same, and nothing is written through the link.
        let port = try #require(run.port("active, listening on 127.0.0.1:"), "\(run.output)")
        #expect(Net.roundTrip(port: port, Array("hi".utf8)) == Array("hi".utf8))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: elsewhere)) == [])
        let list = try h.termhost(["forward", "list"])
        #expect(list.status == 1)
        #expect(list.stderr == "termhost forward: refusing \(runs): it is a symbolic link (expected a directory of your own)\n")
        _ = run.interrupt()

        // Someone else's directory (only root can make one for the test).
        guard getuid() == 0 else { return }
        unlink(runs)
        _ = dir.sub("state/termhost/forwarding")
        chown(runs, 65534, 65534)
        chmod(runs, 0o777)
        let other = try h.run([h.target, "-L", "0:127.0.0.1:\(echo.port)"])
        let refused = other.waitForLine(containing: "cannot reach this process")
        #expect(refused == "forward: 'forward stop', 'retry' and 'list' cannot reach this process: termhost forward: refusing \(runs): it belongs to uid 65534, not to you (uid 0)", "\(other.output)")
        #expect(other.port("active, listening on 127.0.0.1:") != nil)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: runs)) == [])
        let stop = try h.termhost(["forward", "stop", "x"])
        #expect(stop.stderr == "termhost forward: refusing \(runs): it belongs to uid 65534, not to you (uid 0)\n")
        _ = other.interrupt()
    }

    func mode(_ path: String) -> mode_t {
        var st = stat()
        return lstat(path, &st) == 0 ? st.st_mode & 0o777 : 0
    }
}

/// Rules read back from the store are checked as a spec on the command line is: a port out of
/// range fails that rule by name (it used to reach a C call as Int32 and trap), and a value
/// that is not a rule at all is named by `list` and left alone.
@Suite struct StoredRuleEndToEndTests {
    @Test func aStoredPortOutOfRangeFailsItsRuleAndAnUnreadableRuleIsNamed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness.forwarding(dir: dir)
        try h.termhost(["forward", "add", "--name", "wide", h.target, "-R", "0:127.0.0.1:80"])
        try h.termhost(["forward", "add", "--name", "junk", h.target, "-D", "0"])
        let db = dir.path + "/data/termhost/termhost.db"
        func sql(_ statement: String) throws {
            let r = try Shell.run("/usr/bin/sqlite3", [db, statement])
            #expect(r.status == 0, "\(r.output)")
        }
        try sql("UPDATE items SET value = CAST(replace(CAST(value AS TEXT), '\"bindPort\":0', '\"bindPort\":5000000000') AS BLOB) WHERE collection = 'rules' AND CAST(value AS TEXT) LIKE '%wide%'")
        try sql("UPDATE items SET value = CAST('{\"name\":\"junk\"' AS BLOB) WHERE collection = 'rules' AND CAST(value AS TEXT) LIKE '%junk%'")
        let list = try h.termhost(["forward", "list"])
        #expect(list.stderr.hasPrefix("termhost forward: the stored rule '"), "\(list.output)")
        #expect(list.stderr.hasSuffix("' cannot be read (left as it is)\n"), "\(list.output)")
        let run = try h.run(["wide"])
        #expect(run.waitForExit() == 1)
        #expect(run.output.contains("forward 'wide': failed: the port of rule 'wide' in the store must be a whole number from 0 to 65535, not '5000000000'"), "\(run.output)")
    }
}
