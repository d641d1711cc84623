import Foundation
import Synchronization
import TermhostSDK

/// The daemon's transfer queue: every `--background` transfer of this process, each run on a
/// thread of its own (their files still take the slots of TransferQueue, so maxActive and
/// maxPerHost bound them with the foreground ones). Restored from the store when the daemon
/// starts; paused, with their checkpoints, when it stops.
final class BackgroundTransfers: Sendable {
    static let shared = BackgroundTransfers()

    private struct State: Sendable {
        var transfers: [Int: BackgroundTransfer] = [:]
        var stopping = false
    }
    private let state = Mutex(State())
    /// Entered by each run's thread: shutdown waits for them (within its bound).
    private let runs = DispatchGroup()

    func transfer(_ id: Int) -> BackgroundTransfer? { state.withLock { $0.transfers[id] } }
    var all: [BackgroundTransfer] { state.withLock { $0.transfers.values.sorted { $0.id < $1.id } } }

    /// What transfers need from the plugin: nil without the store or the SSH transport.
    static func context(_ host: PluginHost) -> BackgroundTransfer.Context? {
        guard let store = host.store, let transport = SSHTransport(host: host) else { return nil }
        return BackgroundTransfer.Context(transport: transport, checkpoints: Checkpoints(store: store),
                                          records: BackgroundRecords(store: store), host: host)
    }

    /// Saves a new transfer under the next ID (taken under the lock: two clients queueing at
    /// once get two IDs) and starts it with `start`; returns its record.
    func queue(_ context: BackgroundTransfer.Context, _ make: (Int) -> BackgroundRecord,
               start: (BackgroundTransfer) -> Void) throws(PluginError) -> BackgroundRecord {
        let transfer = try state.withLock { s throws(PluginError) -> BackgroundTransfer in
            guard !s.stopping else { throw PluginError("the daemon is stopping") }
            let record = make(max(try context.records.nextID(), (s.transfers.keys.max() ?? 0) + 1))
            try context.records.save(record)
            let transfer = BackgroundTransfer(record, plan: nil, context: context)
            s.transfers[record.id] = transfer
            return transfer
        }
        do { try context.records.prune() } catch { context.host.log(.warning, "sftp: cannot drop old ended transfers: \(error.message)") }
        start(transfer)
        return transfer.record
    }

    /// Starts a run of a transfer unless one runs it already (a resume while it waits).
    func launch(_ transfer: BackgroundTransfer, first: (SFTPConnection, TransferPlan)? = nil) {
        guard transfer.claim() else { first?.0.close(); return }
        runs.enter()
        let runs = self.runs
        let thread = Thread { [self] in
            transfer.run(first: first, stopping: { self.isStopping })
            runs.leave()
        }
        thread.name = "sftp transfer \(transfer.id)"
        thread.start()
    }

    var isStopping: Bool { state.withLock { $0.stopping } }

    /// In the daemon, at activation: the transfers the store holds, the wanted ones started
    /// again (with --resume's checks), the others listed as they ended or paused. A record
    /// this version cannot read, or that fails its checks, is logged and left alone.
    func restore(_ context: BackgroundTransfer.Context) {
        let records: [BackgroundRecord]
        do {
            records = try context.records.all()
            for key in try context.records.unreadable() {
                context.host.log(.warning, "sftp: background transfer '\(key.shown)' cannot be read by this version; left as it is")
            }
        } catch {
            context.host.log(.warning, "sftp: the background transfers cannot be read: \(error.message)")
            return
        }
        for record in records where state.withLock({ $0.transfers[record.id] == nil }) {
            if let problem = record.problem {
                context.host.log(.warning, "sftp: background transfer \(record.id) is not run: \(problem)")
                continue
            }
            let transfer = BackgroundTransfer(record, plan: nil, context: context)
            state.withLock { $0.transfers[record.id] = transfer }
            if record.wanted && record.ended == nil {
                context.host.log(.info, "sftp: going on with background transfer \(record.id) (\(record.from.shown) -> \(record.to.shown))")
                launch(transfer)
            }
        }
    }

    /// No run starts or goes on from now; waits before a next try end. The running batches
    /// are paused by ActiveTransfers.stopAll; each record keeps what the user wants, so the
    /// next daemon goes on.
    func beginStopping() {
        let transfers = state.withLock { s -> [BackgroundTransfer] in
            s.stopping = true
            return Array(s.transfers.values)
        }
        transfers.forEach { $0.wakeForStop() }
    }

    /// Waits for the runs' threads until `deadline`.
    func stop(until deadline: Date) {
        beginStopping()
        _ = runs.wait(timeout: .now() + max(0, deadline.timeIntervalSinceNow))
    }
}
