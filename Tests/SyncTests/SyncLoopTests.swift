import Foundation
import SyncCore
import Testing
import TestSupport

/// The sync loop a long-running process runs (SyncLoop), against real stores and a real vault
/// folder: it syncs on its interval, not before its first delay, not in background, and it
/// stops within its bound even inside a sync that cannot finish.
@Suite struct SyncLoopTests {
    let root = temporaryDirectory("loop")
    var folder: String { "\(root)/vault" }

    func device(_ name: String) throws -> SyncDevice { try SyncDevice(dir: "\(root)/\(name)", folder: folder) }

    func loop(_ d: SyncDevice, interval: Double, firstDelay: Double, gate: NSLock = NSLock(),
              lock: DeviceSyncLock? = nil) -> (SyncLoop, Reports) {
        let folder = self.folder
        let loop = SyncLoop(device: SyncLoop.Device(local: d, state: d, clock: { Date().timeIntervalSince1970 },
                                                    vault: { folder }, openBackend: { FolderBackend(root: folder, create: true) }, lock: lock),
                            interval: interval, firstDelay: firstDelay, gate: gate)
        let reports = Reports()
        loop.addObserver { reports.add($0) }
        return (loop, reports)
    }

    @Test func anotherDevicesChangeArrivesAndALocalOneLeavesWithinTheInterval() throws {
        let a = try device("a"), b = try device("b")
        let (loop, reports) = loop(a, interval: 1, firstDelay: 0)
        loop.start()
        defer { loop.stop(waitingAtMost: 30) }
        try b.putHost("web", #"{"address":"web.example.com"}"#)
        #expect(b.engine.sync() == .synced)
        #expect(Wait.until { (try? a.host("web")) != nil })
        try a.putHost("db", #"{"address":"db.internal"}"#)
        #expect(Wait.until { b.engine.sync() == .synced && (try? b.host("db")) != nil })
        #expect(reports.all.contains { $0.outcome == .synced && $0.applied >= 1 })
        // The report follows the sync that B already saw.
        #expect(Wait.until { reports.all.contains { $0.outcome == .synced && $0.sent == 1 } })
    }

    @Test func aShortLivedProcessNeverSyncsAndStopsAtOnce() throws {
        let a = try device("a")
        try a.putHost("web", #"{"address":"web"}"#)
        let (loop, reports) = loop(a, interval: 1, firstDelay: 5)
        loop.start()
        let started = Date()
        #expect(loop.stop(waitingAtMost: 1.5))
        #expect(Date().timeIntervalSince(started) < 0.5)
        #expect(reports.all.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: "\(folder)/vault.json"))
    }

    @Test func backgroundStartsNoSyncAndForegroundSyncsSoon() throws {
        let a = try device("a"), b = try device("b")
        let gate = NSLock()
        let (loop, reports) = loop(a, interval: 1, firstDelay: 0, gate: gate)
        loop.start()
        defer { loop.stop(waitingAtMost: 30) }
        #expect(Wait.until { !reports.all.isEmpty })
        loop.setForeground(false)
        // A sync the thread began before it saw background still reports: wait until no report
        // has come for longer than an interval tick (1 s) and none is in flight (it holds the gate).
        let background = Date()
        #expect(Wait.until {
            guard Date().timeIntervalSince(max(background, reports.last)) > 1.5, gate.try() else { return false }
            gate.unlock()
            return true
        })
        let before = reports.all.count
        try b.putHost("web", #"{"address":"web"}"#)
        #expect(b.engine.sync() == .synced)
        Wait.observe(for: 3)   // three of the loop's 1 s intervals
        #expect(reports.all.count == before)
        #expect(try a.host("web") == nil)
        loop.setForeground(true)
        #expect(Wait.until { (try? a.host("web")) != nil })
    }

    @Test func whileAnotherProcessHoldsTheDevicesSyncLockTheLoopSkipsItsSyncs() throws {
        let a = try device("a")
        try a.putHost("web", #"{"address":"web"}"#)
        let path = "\(root)/a/sync.lock"
        // Another process's sync: an flock on its own open file, as a second process takes it.
        let other = open(path, O_RDWR | O_CREAT, 0o600)
        #expect(flock(other, LOCK_EX) == 0)
        var held = true
        defer { if held { close(other) } }
        let (loop, reports) = loop(a, interval: 1, firstDelay: 0, lock: DeviceSyncLock(path: path))
        loop.start()
        defer { loop.stop(waitingAtMost: 30) }
        Wait.observe(for: 2.5)   // the first sync at once and two of the loop's 1 s intervals
        #expect(reports.all.isEmpty)
        #expect(try a.engine.status().pending == 0)   // not even captured: no engine ran
        close(other)
        held = false
        #expect(Wait.until { reports.all.contains { $0.outcome == .synced && $0.sent == 1 } })
    }

    @Test func stopIsBoundedInsideASyncThatCannotFinishAndTheChangeIsSentOnce() throws {
        let a = try device("a"), b = try device("b")
        try a.putHost("web", #"{"address":"web.example.com"}"#)
        // Hold the device's journal lock: the loop's sync reads the vault, then waits for it to upload.
        let deviceDir = "\(folder)/devices/\(a.engine.device)"
        try FileManager.default.createDirectory(atPath: deviceDir, withIntermediateDirectories: true)
        let lock = open(deviceDir, O_RDONLY | O_DIRECTORY)
        #expect(flock(lock, LOCK_EX) == 0)
        let (loop, _) = loop(a, interval: 60, firstDelay: 0)
        loop.start()
        // The bound only ends a failing run; under heavy load 120 s was seen not to be enough.
        let waiting = Wait.until(timeout: 300) {
            ((try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? "").split(separator: "\n")
                .contains { $0.contains("-> FLOCK") && $0.split(separator: " ").contains("\(getpid())") }
        }
        #expect(waiting, "the loop's sync never waited for the journal lock")
        let started = Date()
        #expect(!loop.stop(waitingAtMost: 1.5))
        #expect(Date().timeIntervalSince(started) < 2)
        #expect(try a.engine.status().pending == 1)
        // The abandoned sync resumes when the lock is free; the change reaches the vault once.
        close(lock)
        #expect(loop.stop(waitingAtMost: 60))
        #expect(a.engine.sync() == .synced)
        #expect(b.engine.sync() == .synced)
        #expect(try b.host("web")?["address"] as? String == "web.example.com")
        #expect(try a.engine.status().pending == 0)
        #expect(try b.engine.conflicts().isEmpty && a.engine.conflicts().isEmpty)
    }
}

/// Reports a loop delivered, read from the test's thread.
final class Reports: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [SyncLoop.Report] = []
    private var lastAt = Date.distantPast
    func add(_ r: SyncLoop.Report) { lock.lock(); stored.append(r); lastAt = Date(); lock.unlock() }
    var all: [SyncLoop.Report] { lock.lock(); defer { lock.unlock() }; return stored }
    /// When the latest report came.
    var last: Date { lock.lock(); defer { lock.unlock() }; return lastAt }
}
