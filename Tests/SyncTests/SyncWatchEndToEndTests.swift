import Foundation
import TermhostServices
import Testing
import TestSupport

/// The sync loop on the real binary: `termhost sync watch`, and the loop inside a long-running
/// command that is not a sync command. Two devices are two data directories and separate
/// `termhost` processes sharing one vault folder.
@Suite struct SyncWatchEndToEndTests {
    let shared = TemporaryDirectory()
    var plugins: String { shared.sub("plugins") }
    var vault: String { shared.sub("vault") }

    init() throws {
        try TermhostDevice.syncPlugins(in: shared.sub("plugins"))
    }

    /// `interval`: the org.termhost.sync setting in the device's operator policy (JSON text).
    func deviceWithoutVault(interval: String? = nil) -> TermhostDevice {
        let d = TermhostDevice(plugins: plugins)
        if let interval { _ = d.dir.write("policy.json", #"{ "settings": { "org.termhost.sync": { "interval": "# + interval + " } } }") }
        return d
    }

    func device(interval: String? = nil) throws -> TermhostDevice {
        let d = deviceWithoutVault(interval: interval)
        let set = try d.run("sync", "backend", "set", "folder", vault, "--create")
        #expect(set.status == 0, "\(set.output)")
        return d
    }

    func pending(_ d: TermhostDevice) throws -> Int? {
        try d.run("sync", "status", "--json").stdout.firstMatch(of: /"pending":([0-9]+)/).flatMap { Int($0.1) }
    }

    @Test func watchShowsAnotherDevicesChangeAndEndsOnSIGTERMWithinTheBound() throws {
        let a = try device(interval: "1"), b = try device()
        let watch = try Background(Paths.termhost, ["sync", "watch", "--json"], environment: a.env)
        let out = CollectedOutput(watch.stdout)
        #expect(Wait.until { out.text.contains(#""outcome":"synced""#) }, "\(out.text)")
        try b.run("hosts", "add", "web", "web.example.com")
        #expect(try b.run("sync", "now").status == 0)
        #expect(Wait.until { out.text.contains(#""applied":1"#) }, "\(out.text)")
        #expect(try a.run("hosts", "show", "web").status == 0)
        let started = Date()
        kill(watch.process.processIdentifier, SIGTERM)
        watch.process.waitUntilExit()
        #expect(Date().timeIntervalSince(started) < 3)   // the host's shutdown bound
        #expect(watch.process.terminationStatus == 128 + SIGTERM)
        #expect(out.text.split(separator: "\n").allSatisfy { $0.hasPrefix(#"{"time":"#) })
    }

    @Test func theDaemonSyncsWithNoCommandRunningAndSyncStatusReadsItsLoop() throws {
        let a = try device(interval: "1"), b = try device()
        let log = a.dir.path + "/daemon.log"
        let daemon = try Background("/bin/sh", ["-c", "exec \"$0\" daemon 2>>\"$1\"", Paths.termhost, log], environment: a.env)
        defer {
            _ = try? a.run("daemon", "stop")
            if daemon.process.isRunning { ProcessTree.kill(daemon.process.processIdentifier) }
        }
        #expect(Wait.until(timeout: 120) { (try? a.run("daemon", "status").status) == 0 }, "the daemon did not answer")
        try b.run("hosts", "add", "web", "web.example.com")
        #expect(try b.run("sync", "now").status == 0)
        // Nothing runs on device a but its daemon, with no client attached: the change arrives.
        #expect(Wait.until(timeout: 60) { (try? a.run("hosts", "show", "web").status) == 0 },
                "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        let status = try a.run("sync", "status", "--json")
        #expect(!status.stdout.contains(#""last_success":null"#) && status.stdout.contains(#""pending":0"#), "\(status.output)")
    }

    @Test func SIGTERMDuringASyncThatCannotFinishExitsWithinTheBoundAndTheChangeIsSentOnce() throws {
        let a = try device(), b = try device()
        try a.run("hosts", "add", "web", "web.example.com")
        // Hold the device's journal lock: the watch's first sync reads the vault, then waits to upload.
        let lock = try JournalLock(vault: vault, device: a)
        let watch = try Background(Paths.termhost, ["sync", "watch"], environment: a.env)
        let pid = watch.process.processIdentifier
        #expect(JournalLock.isWaited(by: pid), "the watch's sync never waited for the journal lock")
        let started = Date()
        kill(pid, SIGTERM)
        watch.process.waitUntilExit()
        #expect(Date().timeIntervalSince(started) < 3)   // the host's shutdown bound
        #expect(watch.process.terminationStatus == 128 + SIGTERM)
        lock.release()
        #expect(try pending(a) == 1)
        #expect(try a.run("sync", "now").status == 0)
        #expect(try pending(a) == 0)
        #expect(try b.run("sync", "now").status == 0)
        #expect(try b.run("hosts", "list").stdout.components(separatedBy: "web.example.com").count == 2)
        #expect(try b.run("sync", "conflicts").stdout == "no conflicts\n")
    }

    @Test func aShortCommandDoesNotSync() throws {
        let a = try device()
        try a.run("hosts", "add", "web", "web.example.com")
        #expect(try a.run("hosts", "list").status == 0)
        #expect(try a.run("sync", "status", "--json").stdout.contains(#""last_success":null"#))
        // The vault was made by `backend set --create`; no device has written into it.
        #expect(!FileManager.default.fileExists(atPath: "\(vault)/devices"))
    }

    @Test func foregroundAfterSIGTSTPSyncsAtOnce() throws {
        let a = try device(interval: "86400"), b = try device()
        let watch = try Background(Paths.termhost, ["sync", "watch", "--json"], environment: a.env)
        let out = CollectedOutput(watch.stdout)
        defer { kill(watch.process.processIdentifier, SIGKILL); watch.process.waitUntilExit() }
        #expect(Wait.until { out.text.contains(#""outcome":"synced""#) }, "\(out.text)")
        let pid = watch.process.processIdentifier
        kill(pid, SIGTSTP)   // background, then the process stops itself
        #expect(Wait.until { CollectedOutput.processState(pid) == "T" })
        try b.run("hosts", "add", "web", "web.example.com")
        #expect(try b.run("sync", "now").status == 0)
        kill(pid, SIGCONT)
        // The interval is a day: only the return to foreground explains a sync now.
        #expect(Wait.until { out.text.contains(#""applied":1"#) }, "\(out.text)")
    }

    @Test func aBadIntervalIsRefusedByNameAndOtherCommandsStillRun() throws {
        for (value, shown) in [("-5", "-5"), ("86401", "86401"), (#""soon""#, #""soon""#), ("1.5", "1.5")] {
            let a = deviceWithoutVault(interval: value)
            let problem = "interval (setting of org.termhost.sync) must be a whole number of seconds from 0 to 86400, or \"off\", not '\(shown)'"
            // Every process says so at start, and goes on without a background sync.
            let atStart = "termhost: org.termhost.sync: error: \(problem); no sync in background until it is fixed\n"
            let watch = try a.run("sync", "watch")
            #expect(watch.status == 1)
            #expect(watch.stderr == atStart + "termhost sync watch: \(problem)\n")
            let list = try a.run("hosts", "list")
            #expect(list.status == 0 && list.stderr == atStart, "\(list.output)")
        }
        for value in ["0", #""off""#, "1", "86400"] {
            let list = try deviceWithoutVault(interval: value).run("hosts", "list")
            #expect(list.status == 0 && list.stderr.isEmpty, "\(value): \(list.output)")
        }
    }

    /// Device A runs `termhost exec HOST -- sleep 120` against a real sshd with `interval` in its
    /// policy; device B adds a host and syncs. Returns whether A's store (read directly: a
    /// termhost process started to look could sync by itself) has it within `within` seconds.
    func sessionReceivesAChange(interval: String, within: Double) throws -> Bool {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        _ = try Fixtures.bundle("libSyncPlugin.so", as: "org.termhost.sync", in: h.plugins)
        _ = dir.write("policy.json", #"{ "settings": { "org.termhost.sync": { "interval": "# + interval + " } } }")
        #expect(try h.termhost(["sync", "backend", "set", "folder", vault, "--create"]).status == 0)
        let b = try device()
        let session = try Background(Paths.termhost, ["exec", h.target, "--", "sleep", "120"], environment: h.environment)
        defer { kill(session.process.processIdentifier, SIGKILL); session.process.waitUntilExit() }
        try b.run("hosts", "add", "web", "web.example.com")
        #expect(try b.run("sync", "now").status == 0)
        let store = try SQLiteStore(path: dir.sub("data") + "/termhost/termhost.db")
        let arrived = Wait.until(timeout: within) { (try? store.get(namespace: "org.termhost.ssh", collection: "hosts", key: "web")) != nil }
        #expect(session.process.isRunning, "the session ended before the window did")
        return arrived
    }

    @Test func aLongRunningCommandThatIsNotASyncCommandSyncsInBackground() throws {
        #expect(try sessionReceivesAChange(interval: "1", within: 60))
    }

    @Test func intervalOffMeansNoBackgroundSync() throws {
        // The window: past the 5 s first delay the loop would have used, and a few syncs more.
        #expect(try !sessionReceivesAChange(interval: #""off""#, within: 8))
    }
}
