import Foundation
import Synchronization
import TermhostSDK

/// One `--background` transfer in the daemon. It runs its batch on a thread of its own, and
/// after a lost connection runs what is left on a new one, 1, 2, 5, 10, then every 30 s, for
/// as long as the user wants it (autossh's way, and the forwarding rules'); after a pause or a
/// daemon restart it goes on the same way when resumed. Every file that goes on does so
/// through `--resume`'s checks: the source unchanged, the partial's prefix the bytes sent.
final class BackgroundTransfer: Sendable {
    enum State: Sendable, Equatable {
        /// Connecting and planning (or planning again what is left).
        case connecting
        case running
        /// The connection was lost; the next try is at `next`.
        case waiting(next: Date, reason: String)
        /// Stopped until `transfers resume`: by the user, or because only the user can fix it.
        case paused(String)
        /// "done", "failed: ..." or "cancelled".
        case ended(String)
    }

    static let delays: [Double] = [1, 2, 5, 10, 30]

    /// What a run needs from the plugin.
    struct Context: Sendable {
        let transport: SSHTransport
        let checkpoints: Checkpoints
        let records: BackgroundRecords
        let host: PluginHost
    }

    let progress = BackgroundProgress()
    let context: Context
    private struct Inner: Sendable {
        var record: BackgroundRecord
        var state: State
        /// The batch's plan once made here; what is left of it is what the next run moves. nil
        /// for a transfer restored after a restart: planned again, with --resume.
        var plan: TransferPlan?
        var control: TransferControl?
        var attempt = 0
        /// A thread runs it now (one at most).
        var active = false
        var cancelled = false
        /// How many times the user paused it: a run's pause that the user did not ask for
        /// (another device changed the host's route) counts none.
        var userPauses = 0
    }
    private let inner: Mutex<Inner>
    /// Signalled to end a wait before the next try early (resume, cancel, shutdown).
    private let wake = DispatchSemaphore(value: 0)

    init(_ record: BackgroundRecord, plan: TransferPlan?, context: Context) {
        let state: State = record.ended.map(State.ended) ?? (record.wanted ? .connecting : .paused("paused"))
        inner = Mutex(Inner(record: record, state: state, plan: plan))
        self.context = context
    }

    var record: BackgroundRecord { inner.withLock { $0.record } }
    var state: State { inner.withLock { $0.state } }
    var id: Int { record.id }

    // MARK: asked by the user (any thread)

    /// Stops it until resumed: the files moving now pause with their checkpoints.
    func pause() throws(PluginError) {
        let control = try update { inner throws(PluginError) -> TransferControl? in
            if case .ended(let how) = inner.state { throw PluginError("transfer \(inner.record.id) has ended (\(how))") }
            inner.record.wanted = false
            inner.userPauses += 1
            if !inner.active { inner.state = .paused("paused") }
            return inner.control
        }
        control?.request(.pause, reason: "paused by 'termhost transfers pause'")
        wake.signal()
    }

    /// Wants it running again. Returns whether the caller must start a run (none is going on:
    /// one that is, waiting or pausing, sees the wish and goes on by itself).
    func resume() throws(PluginError) -> Bool {
        let start = try update { inner throws(PluginError) -> Bool in
            if case .ended(let how) = inner.state { throw PluginError("transfer \(inner.record.id) has ended (\(how))") }
            inner.record.wanted = true
            inner.attempt = 0
            guard !inner.active else { return false }
            inner.state = .connecting
            return true
        }
        wake.signal()
        return start
    }

    enum Cancelling { case byItsRun, now }

    /// Cancels it. A run going on ends it (its batch removes the partials it was writing, then
    /// what earlier runs left); otherwise the caller calls `finishCancel`.
    func cancel() throws(PluginError) -> Cancelling {
        let (control, active) = try update { inner throws(PluginError) -> (TransferControl?, Bool) in
            if case .ended(let how) = inner.state { throw PluginError("transfer \(inner.record.id) has ended (\(how))") }
            inner.record.wanted = false
            inner.cancelled = true
            return (inner.control, inner.active)
        }
        control?.request(.cancel, reason: "cancelled by 'termhost transfers cancel'")
        wake.signal()
        return active ? .byItsRun : .now
    }

    /// Ends a cancelled transfer no run holds: its partial files and checkpoints go.
    func finishCancel() {
        discardLeftovers()
        set(.ended("cancelled"), ended: "cancelled", wanted: false)
    }

    /// The daemon stops: a wait before the next try ends now (the run then sees `stopping`).
    func wakeForStop() { wake.signal() }

    /// Takes the right to run it; false when a thread runs it already.
    func claim() -> Bool {
        inner.withLock { inner in
            guard !inner.active else { return false }
            inner.active = true
            return true
        }
    }

    /// Changes the record and saves it, under the lock: two clients never lose each other's word.
    private func update<T>(_ body: (inout Inner) throws(PluginError) -> T) throws(PluginError) -> T {
        try inner.withLock { inner throws(PluginError) -> T in
            let result = try body(&inner)
            try context.records.save(inner.record)
            return result
        }
    }

    private func set(_ state: State, ended: String? = nil, wanted: Bool? = nil) {
        inner.withLock { inner in
            inner.state = state
            if let ended { inner.record.ended = ended }
            if let wanted { inner.record.wanted = wanted }
            if ended != nil || wanted != nil {
                do throws(PluginError) { try context.records.save(inner.record) } catch {
                    context.host.log(.warning, "sftp: transfer \(inner.record.id): cannot save its state: \(error.message)")
                }
            }
        }
    }

    // MARK: the run (its own thread, after `claim`)

    /// Runs until it ends, pauses or the daemon stops. `first`: the connection and plan made
    /// by the command that queued it (which could prompt on the user's terminal); later runs
    /// connect without a terminal.
    func run(first: (SFTPConnection, TransferPlan)?, stopping: @Sendable () -> Bool) {
        var prepared = first
        defer { prepared?.0.close() }
        while true {
            // Whether to go on, decided with giving up the run: a resume either comes before
            // (and is seen here) or after (and starts a new run).
            enum Next { case go(TransferControl, userPauses: Int), stop, cancel }
            let next = inner.withLock { inner -> Next in
                if inner.cancelled { return .cancel }
                guard inner.record.wanted, !stopping() else {
                    inner.active = false
                    if !stopping(), case .connecting = inner.state { inner.state = .paused("paused") }
                    return .stop
                }
                let control = TransferControl(limitBytesPerSecond: inner.record.limit)
                inner.control = control
                return .go(control, userPauses: inner.userPauses)
            }
            let control: TransferControl, userPauses: Int
            switch next {
            case .stop: return
            case .cancel:
                finishCancel()
                inner.withLock { $0.active = false }
                return
            case .go(let c, let pauses): (control, userPauses) = (c, pauses)
            }
            let outcome = runOnce(control, prepared: prepared, stopping: stopping)
            prepared = nil
            inner.withLock { $0.control = nil }
            guard let delay = settle(outcome, control, userPauses: userPauses, stopping: stopping) else { continue }
            set(.waiting(next: Date().addingTimeInterval(delay), reason: progress.now.lastError ?? "the connection was lost"))
            _ = wake.wait(timeout: .now() + delay)
            inner.withLock { if case .waiting = $0.state { $0.state = .connecting } }
        }
    }

    private enum Outcome {
        case batch(BatchSummary)
        case error(SFTPError)
    }

    /// One connection's worth: connect and plan (unless given), then move the batch.
    private func runOnce(_ control: TransferControl, prepared: (SFTPConnection, TransferPlan)?, stopping: () -> Bool) -> Outcome {
        let record = self.record
        // Registered before connecting and removed after closing: the daemon's shutdown
        // pauses it and waits for libssh2 to finish (Transfers.swift).
        ActiveTransfers.shared.add(control, host: record.host)
        defer { ActiveTransfers.shared.remove(control) }
        if stopping() { control.request(.pause) }
        do throws(SFTPError) {
            let (connection, plan): (SFTPConnection, TransferPlan)
            if let prepared {
                (connection, plan) = prepared
                inner.withLock { $0.plan = plan }
            } else { (connection, plan) = try reconnect(record) }
            defer { connection.close() }
            set(.running)
            let summary = TransferBatch(plan: plan, first: connection, transport: context.transport, control: control,
                                        observer: progress, checkpoints: context.checkpoints).run()
            return .batch(summary)
        } catch {
            return .error(error)
        }
    }

    /// A new connection, without a terminal, and what is left to move on it, with --resume.
    private func reconnect(_ record: BackgroundRecord) throws(SFTPError) -> (SFTPConnection, TransferPlan) {
        set(.connecting)
        let connection = try SFTPConnection(transport: context.transport, destination: record.host, scene: 0)
        do throws(SFTPError) {
            let finished = progress.now.finished
            if var plan = inner.withLock({ $0.plan }) {
                plan.jobs = plan.jobs.filter { !finished.contains($0.display) }.map { var j = $0; j.resume = true; return j }
                // Said and counted by the first run.
                (plan.skipped, plan.refused, plan.notices, plan.conflicts) = ([], [], [], [])
                return (connection, plan)
            }
            var options = TransferOptions()
            (options.recursive, options.resume, options.conflict) = (record.recursive, true, record.conflict)
            let plan = try Transfers(transport: context.transport, checkpoints: context.checkpoints, ask: nil)
                .plan(record.direction, on: connection, remote: record.remote, local: record.local, options: options)
            inner.withLock { $0.plan = plan }
            return (connection, plan)
        } catch {
            connection.close()
            throw error
        }
    }

    /// What comes after a run: the seconds until the next try, or nil when this one is over
    /// for now (ended, paused, or the daemon stops).
    private func settle(_ outcome: Outcome, _ control: TransferControl, userPauses: Int, stopping: () -> Bool) -> Double? {
        let requested = control.requested
        // The loop's top ends it (and discards what is left).
        if requested == .cancel || inner.withLock({ $0.cancelled }) { return nil }
        // A shutdown's pause: the record still wants it, and the next daemon goes on.
        if stopping() { return nil }
        if requested == .pause {
            // By the user (who may have resumed meanwhile: the loop goes on then), or by a
            // route another device changed, which only the user may accept.
            let why = progress.now.lastError ?? "paused"
            let byUser = inner.withLock { $0.userPauses > userPauses }
            if byUser { inner.withLock { $0.state = .paused(why) } } else { set(.paused(why), wanted: false) }
            return nil
        }
        switch outcome {
        case .error(let error):
            switch error.kind {
            case .connectionLost:
                inner.withLock { $0.attempt += 1 }
                return delay()
            case .denied:
                // Credentials or a host key only the user can settle: never retried alone.
                set(.paused(error.message), wanted: false)
            default:
                set(.ended("failed: \(error.message)"), ended: "failed: \(error.message)", wanted: false)
            }
            return nil
        case .batch(let summary):
            if summary.connectionLost {
                inner.withLock { $0.attempt = summary.done > 0 ? 1 : $0.attempt + 1 }
                return delay()
            }
            let figures = progress.now
            if summary.paused + summary.notStarted > 0 {
                set(.paused(figures.lastError ?? "paused"), wanted: false)
            } else if figures.failed > 0 {
                let text = "failed: \(figures.failed) of \(figures.files) file\(figures.files == 1 ? "" : "s"): \(figures.lastError ?? "")"
                set(.ended(text), ended: text, wanted: false)
            } else {
                set(.ended("done"), ended: "done", wanted: false)
            }
            return nil
        }
    }

    private func delay() -> Double {
        let attempt = inner.withLock { $0.attempt }
        return BackgroundTransfer.delays[min(max(attempt, 1), BackgroundTransfer.delays.count) - 1]
    }

    /// Removes the partial files and checkpoints earlier runs left paused (the batch that was
    /// cancelled removed its own). A partial that cannot be removed is logged; nothing else
    /// holds it then but `sftp paused`, which lists it.
    func discardLeftovers() {
        let record = self.record
        let keys = inner.withLock { $0.plan.map { Set($0.jobs.map(\.checkpointKey)) } }
        let leftovers = context.checkpoints.all().filter { entry in
            if let keys { return keys.contains(entry.key) }
            // Restored after a restart and not planned again: what lies at or below its root.
            let c = entry.checkpoint
            guard let root = record.root, c.direction == record.direction.rawValue, c.host == record.host else { return false }
            let path = record.direction == .download ? c.localPath : c.remotePath
            return path == root || path.hasPrefix(root.hasSuffix("/") ? root : root + "/")
        }
        guard !leftovers.isEmpty else { return }
        let discard = PausedDiscard(transport: context.transport, checkpoints: context.checkpoints, scene: 0)
        for (key, checkpoint) in leftovers {
            if let problem = discard.discard(key, checkpoint) {
                context.host.log(.warning, "sftp: transfer \(record.id): \(problem)")
            }
        }
    }
}
