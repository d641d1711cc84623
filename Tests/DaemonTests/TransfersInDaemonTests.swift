import Foundation
import Glibc
import Testing
import TestSupport

/// `sftp get|put --background`: the daemon moves the bytes after the client exited, goes on
/// after the server is killed and comes back (with --resume's checks: the bytes kept are not
/// sent again), after a daemon restart, and is paused, resumed and cancelled by ID.
@Suite struct TransfersInDaemonTests {
    static let size = 6 * 1024 * 1024
    /// 16 Mbit/s: about three seconds for the file, time enough to cut it short.
    static let limit = ["-l", "16000"]

    /// `termhost transfers --json`, the transfer with `id`.
    static func transfer(_ h: SSHHarness, _ id: Int) -> [String: Any]? {
        guard let listed = try? h.termhost(["transfers", "--json"]),
              let all = (try? JSONSerialization.jsonObject(with: Data(listed.stdout.utf8))) as? [[String: Any]] else { return nil }
        return all.first { $0["id"] as? Int == id }
    }

    /// Waits until transfer `id` is in `state`; its last listing either way.
    static func waitFor(_ h: SSHHarness, _ id: Int, _ state: String, timeout: Double = 120) -> [String: Any]? {
        var last: [String: Any]?
        _ = Wait.until(timeout: timeout) {
            last = transfer(h, id)
            return last?["state"] as? String == state
        }
        return last
    }

    @Test func aBackgroundDownloadOutlivesItsClientAndAKilledServer() throws {
        let setup = try DaemonSetup("termhost-transfers", sftp: true)
        defer { setup.stop() }
        let (dir, h, daemon) = (setup.dir, setup.ssh, setup.daemon)
        let source = dir.sub("remote") + "/big.bin", target = dir.sub("local") + "/big.bin"
        Files.random(source, bytes: Self.size)

        // The command returns at once: the client is gone while the daemon moves the bytes.
        let queued = try h.sftp("get", ["--background"] + Self.limit + [h.remote(source), target])
        #expect(queued.status == 0 && queued.stdout.hasPrefix("transfer 1: get ") && queued.stdout.contains("runs in the daemon"),
                "\(queued.output)")
        #expect(Files.waitForSize(Files.partial(of: target), atLeast: 1_000_000), "\(daemon.log)")
        let running = try #require(Self.transfer(h, 1))
        #expect(running["state"] as? String == "running" && (running["bytesDone"] as? Int ?? 0) > 0, "\(running)")

        // The server dies: the transfer waits to reconnect, then goes on from its checkpoint.
        h.server.crash()
        let waiting = Self.waitFor(h, 1, "reconnecting", timeout: 60)
        #expect(waiting?["state"] as? String == "reconnecting" && waiting?["retryIn"] != nil, "\(String(describing: waiting)) \(daemon.log)")
        try h.server.restart()
        let done = Self.waitFor(h, 1, "done")
        #expect(done?["state"] as? String == "done", "\(String(describing: done)) \(daemon.log)")
        #expect(Files.sha256(target) == Files.sha256(source))
        #expect((done?["resumedFrom"] as? Int ?? 0) >= 1_000_000, "it went on from the bytes kept: \(String(describing: done))")
        #expect(!Files.exists(Files.partial(of: target)))
        #expect(try h.termhost(["sftp", "paused"]).stdout == "no paused transfers\n")
        let listed = try h.termhost(["transfers"])
        #expect(listed.stdout.hasPrefix("1  get  done  100% of 6.3 MB, 1 of 1 file  "), "\(listed.output)")
    }

    @Test func anUploadIsPausedResumedAndAnotherCancelledByID() throws {
        let setup = try DaemonSetup("termhost-transfers", sftp: true)
        defer { setup.stop() }
        let (dir, h, daemon) = (setup.dir, setup.ssh, setup.daemon)
        let source = dir.sub("local") + "/big.bin", target = dir.sub("remote") + "/big.bin"
        Files.random(source, bytes: Self.size)

        let queued = try h.sftp("put", ["--background", "--json"] + Self.limit + [source, h.remote(target)])
        #expect(queued.status == 0 && queued.stdout.hasPrefix("{\"id\":1,\"files\":1,"), "\(queued.output)")
        #expect(Files.waitForSize(Files.partial(of: target), atLeast: 500_000), "\(daemon.log)")
        let paused = try h.termhost(["transfers", "pause", "1"])
        #expect(paused.status == 0 && paused.stdout.contains("transfer 1: paused"), "\(paused.output)")
        let stopped = Self.waitFor(h, 1, "paused", timeout: 30)
        #expect(stopped?["state"] as? String == "paused", "\(String(describing: stopped))")
        let kept = Files.size(Files.partial(of: target))
        #expect(kept >= 500_000 && kept < Self.size, "the partial is kept: \(kept)")

        let resumed = try h.termhost(["transfers", "resume", "1"])
        #expect(resumed.status == 0 && resumed.stdout.contains("transfer 1: resumed"), "\(resumed.output)")
        let done = Self.waitFor(h, 1, "done")
        #expect(done?["state"] as? String == "done", "\(String(describing: done)) \(daemon.log)")
        #expect(Files.sha256(target) == Files.sha256(source))
        #expect((done?["resumedFrom"] as? Int ?? 0) > 0, "\(String(describing: done))")
        #expect(try h.termhost(["transfers", "pause", "1"]).stderr.contains("transfer 1 has ended (done)"))

        // Another one is cancelled mid-way: its remote partial goes.
        let other = dir.sub("remote") + "/other.bin"
        let second = try h.sftp("put", ["--background", "-l", "8000", source, h.remote(other)])
        #expect(second.status == 0 && second.stdout.hasPrefix("transfer 2: put "), "\(second.output)")
        #expect(Files.waitForSize(Files.partial(of: other), atLeast: 200_000), "\(daemon.log)")
        let cancelled = try h.termhost(["transfers", "cancel", "2"])
        #expect(cancelled.status == 0 && cancelled.stdout.contains("transfer 2: cancelled"), "\(cancelled.output)")
        #expect(Self.transfer(h, 2)?["state"] as? String == "cancelled")
        #expect(!Files.exists(Files.partial(of: other)) && !Files.exists(other))
        #expect(try h.termhost(["sftp", "paused"]).stdout == "no paused transfers\n")
        let unknown = try h.termhost(["transfers", "resume", "9"])
        #expect(unknown.status == 1 && unknown.stderr.contains("no transfer 9"), "\(unknown.output)")
    }

    @Test func aStoppedDaemonGoesOnWithItsTransfersWhenItStartsAgain() throws {
        let setup = try DaemonSetup("termhost-transfers", sftp: true)
        defer { setup.stop() }
        let (dir, h, daemon) = (setup.dir, setup.ssh, setup.daemon)
        let source = dir.sub("remote") + "/big.bin", target = dir.sub("local") + "/big.bin"
        Files.random(source, bytes: Self.size)
        #expect(try h.sftp("get", ["--background"] + Self.limit + [h.remote(source), target]).status == 0)
        #expect(Files.waitForSize(Files.partial(of: target), atLeast: 500_000), "\(daemon.log)")

        // The daemon stops: the transfer pauses with its checkpoint, and the store keeps it.
        daemon.stop()
        let listed = try h.termhost(["transfers"])
        #expect(listed.stdout.hasPrefix("1  get  waits for the daemon  "), "read from the store with no daemon: \(listed.output)")
        #expect(try h.termhost(["daemon", "status"]).status == 1, "listing starts no daemon")
        #expect(!Files.exists(target))

        try daemon.start()
        let done = Self.waitFor(h, 1, "done")
        #expect(done?["state"] as? String == "done", "\(String(describing: done)) \(daemon.log)")
        #expect(Files.sha256(target) == Files.sha256(source))
        #expect(dir.hostLog.contains("going on with background transfer 1"), "\(dir.hostLog)")
    }
}
