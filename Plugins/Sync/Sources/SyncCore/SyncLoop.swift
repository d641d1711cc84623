import Foundation

/// Design: the sync loop of a long-running process (NOTES section 5: the sync coordinator is
/// process scope). One thread waits for the next sync to be due (the interval, or `syncSoon()`
/// after foreground), for a backend's wake-up hint (PostgreSQL's NOTIFY, read in short slices
/// so that a stop is heard), or for `stop`; then, if in foreground, it syncs. The engine is
/// made anew for every sync, so state another process wrote (a `termhost sync now`) is read
/// again; the backend is kept between syncs (its connection LISTENs) and opened again when the
/// configured vault changes.
///
/// Stopping is bounded: `stop(waitingAtMost:)` wakes the thread and waits for an in-flight
/// sync only that long. The engine writes its pending list before it sends anything and a
/// change ID is applied once however often it is sent, so a sync abandoned in a hung backend
/// call loses nothing: the next sync (in any process) sends what it had not.
public final class SyncLoop: @unchecked Sendable {
    /// What one sync needs, supplied by the plugin.
    public struct Device {
        public var local: SyncLocalRecords
        public var state: SyncStateStore
        public var clock: () -> Double
        /// The configured vault as text that changes when another one is chosen ("folder /x").
        public var vault: () throws -> String
        public var openBackend: () throws -> SyncBackend
        /// Held by every sync of this device's store in any process; nil: this loop is its only syncer.
        public var lock: DeviceSyncLock?

        public init(local: SyncLocalRecords, state: SyncStateStore, clock: @escaping () -> Double,
                    vault: @escaping () throws -> String, openBackend: @escaping () throws -> SyncBackend,
                    lock: DeviceSyncLock? = nil) {
            self.local = local
            self.state = state
            self.clock = clock
            self.vault = vault
            self.openBackend = openBackend
            self.lock = lock
        }
    }

    /// What one sync did, for `termhost sync watch`.
    public struct Report: Sendable {
        public let outcome: SyncOutcome
        /// Changes the vault accepted, and remote versions applied to this device.
        public let sent: Int
        public let applied: Int
        /// nil when the sync could not start (the vault's settings are unusable).
        public let pending: Int?
        public let conflicts: Int
        public let backend: String
    }

    /// Seconds between syncs (a failed one is retried after the same time).
    public let interval: Double
    /// How long a backend's wait for a hint may block before the thread looks at its flags.
    static let hintSlice = 0.25

    private let device: Device
    /// Held by every sync in this process (the loop's and the sync commands'); the loop only
    /// tries it, and skips a sync a command is already doing.
    private let gate: NSLock
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var due: Date
    private var foreground = true
    private var stopping = false
    private var running = false
    private var observers: [(Report) -> Void] = []

    /// `firstDelay`: seconds before the first sync, so a short command never pays for one.
    public init(device: Device, interval: Double, firstDelay: Double, gate: NSLock) {
        self.device = device
        self.interval = interval
        self.gate = gate
        self.due = Date().addingTimeInterval(firstDelay)
    }

    /// Starts the loop's thread. Once only.
    public func start() {
        condition.lock()
        running = true
        condition.unlock()
        let thread = Thread { [self] in run() }
        thread.name = "termhost-sync"
        thread.start()
    }

    /// Background pauses syncing (none is started); foreground resumes it with a sync soon.
    public func setForeground(_ value: Bool) {
        condition.lock()
        if value && !foreground { due = min(due, Date()) }
        foreground = value
        condition.broadcast()
        condition.unlock()
    }

    /// Makes the next sync due now.
    public func syncSoon() {
        condition.lock()
        due = Date()
        condition.broadcast()
        condition.unlock()
    }

    /// Calls `report` after every sync, on the loop's thread.
    public func addObserver(_ report: @escaping (Report) -> Void) {
        condition.lock()
        observers.append(report)
        condition.unlock()
    }

    /// Ends the loop: wakes the thread and waits at most `seconds` for it (a sync in flight).
    /// Returns false when it was still syncing then; it is abandoned, and loses nothing.
    @discardableResult
    public func stop(waitingAtMost seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        stopping = true
        condition.broadcast()
        while running {
            if !condition.wait(until: deadline) { return !running }
        }
        return true
    }

    // MARK: - The thread

    private func run() {
        var backend: SyncBackend?
        var vault: String?
        var cursor = SyncCursor.start
        var hints = true
        defer {
            backend?.close()
            condition.lock()
            running = false
            condition.broadcast()
            condition.unlock()
        }
        while true {
            condition.lock()
            if stopping {
                condition.unlock()
                return
            }
            let now = Date()
            if foreground && now >= due {
                condition.unlock()
                sync(&backend, &vault, &cursor, &hints)
                condition.lock()
                due = Date().addingTimeInterval(interval)
                condition.unlock()
                continue
            }
            guard foreground else {
                // Until foreground or stop. (corelibs Foundation traps on wait(until: .distantFuture).)
                condition.wait()
                condition.unlock()
                continue
            }
            let until = due
            guard let b = backend, hints else {
                _ = condition.wait(until: until)
                condition.unlock()
                continue
            }
            condition.unlock()
            let slice = min(until.timeIntervalSince(now), SyncLoop.hintSlice)
            if b.waitForChanges(after: cursor, seconds: slice) {
                syncSoon()
            } else if Date().timeIntervalSince(now) < slice / 2 {
                hints = false   // a backend without hints (the folder) answers at once: the interval covers it
            }
        }
    }

    private func sync(_ backend: inout SyncBackend?, _ vault: inout String?, _ cursor: inout SyncCursor, _ hints: inout Bool) {
        // A sync command of this process is running one: that one is as good as ours.
        guard gate.try() else { return }
        defer { gate.unlock() }
        guard let lock = device.lock else { return syncHolding(&backend, &vault, &cursor, &hints) }
        do {
            // Another process of this device is syncing: that sync is as good as ours. The
            // engine, made after the lock is taken, reads the state that process saved.
            _ = try lock.ifFree { syncHolding(&backend, &vault, &cursor, &hints) }
        } catch {
            deliver(Report(outcome: .failed("\(error)"), sent: 0, applied: 0, pending: nil, conflicts: 0, backend: vault ?? ""))
        }
    }

    private func syncHolding(_ backend: inout SyncBackend?, _ vault: inout String?, _ cursor: inout SyncCursor, _ hints: inout Bool) {
        let tally = SyncTally()
        let report: Report
        do {
            let configured = try device.vault()
            if configured != vault || backend == nil {
                backend?.close()
                backend = try device.openBackend()
                vault = configured
                hints = true
            }
            let engine = try SyncEngine(backend: TalliedBackend(backend!, tally), local: TalliedRecords(device.local, tally),
                                        store: device.state, clock: device.clock)
            let outcome = engine.sync()
            cursor = SyncCursor(engine.state.cursor)
            let status = try engine.status()
            report = Report(outcome: outcome, sent: tally.sent, applied: tally.applied, pending: status.pending,
                            conflicts: status.conflicts, backend: status.backend)
        } catch {
            report = Report(outcome: .failed("\(error)"), sent: tally.sent, applied: tally.applied, pending: nil, conflicts: 0,
                            backend: vault ?? "")
        }
        deliver(report)
    }

    private func deliver(_ report: Report) {
        condition.lock()
        let listeners = observers
        condition.unlock()
        for listener in listeners { listener(report) }
    }
}
