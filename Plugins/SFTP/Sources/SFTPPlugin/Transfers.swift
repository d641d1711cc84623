import Foundation
import TermhostSDK

/// Options shared by `get` and `put`, from the command line, the shell or the ABI.
struct TransferOptions: Sendable {
    var recursive = false
    var resume = false
    var conflict: ConflictPolicy?
    /// Bytes per second, 0 for no limit.
    var limit: UInt64 = 0
    var scene: UInt64 = 0
}

/// get and put end to end: connect (through the SSH plugin), plan, settle conflicts, move.
struct Transfers {
    let transport: SSHTransport
    let checkpoints: Checkpoints
    /// Asks the user how to settle conflicts; nil when nobody can be asked (then: fail).
    let ask: (@Sendable (_ count: Int, _ first: String) -> ConflictPolicy?)?

    func download(host: String, remote: String, local: String, options: TransferOptions,
                  observer: TransferObserver, control: TransferControl) throws(SFTPError) -> BatchSummary {
        try run(.download, host: host, remote: remote, local: local, options: options, observer: observer, control: control)
    }

    func upload(host: String, local: String, remote: String, options: TransferOptions,
                observer: TransferObserver, control: TransferControl) throws(SFTPError) -> BatchSummary {
        try run(.upload, host: host, remote: remote, local: local, options: options, observer: observer, control: control)
    }

    /// Walks the source and settles the conflicts (asking, or by the options' policy) on
    /// `connection`: what a batch will do, before a byte moves.
    func plan(_ direction: FileJob.Direction, on connection: SFTPConnection, remote: String, local: String,
              options: TransferOptions) throws(SFTPError) -> TransferPlan {
        try connection.run { fs, _ throws(SFTPError) in
            let planner = Planner(fs: fs, host: connection.destination, recursive: options.recursive, resume: options.resume)
            switch direction {
            case .download:
                var plan = try planner.download(remote, to: local)
                try settle(&plan, options) { path throws(SFTPError) in LocalFile.stat(path, follow: false) != nil }
                return plan
            case .upload:
                var plan = try planner.upload(local, to: remote)
                try settle(&plan, options) { path throws(SFTPError) in try fs.statIfExists(path, follow: false) != nil }
                return plan
            }
        }
    }

    private func settle(_ plan: inout TransferPlan, _ options: TransferOptions, exists: (String) throws(SFTPError) -> Bool) throws(SFTPError) {
        guard !plan.conflicts.isEmpty else { return }
        let first = plan.jobs[plan.conflicts[0]].targetDisplay
        let policy = options.conflict ?? ask?(plan.conflicts.count, first) ?? .fail
        try policy.apply(to: &plan, exists: exists)
    }

    private func run(_ direction: FileJob.Direction, host: String, remote: String, local: String, options: TransferOptions,
                     observer: TransferObserver, control: TransferControl) throws(SFTPError) -> BatchSummary {
        // Registered from the start and removed only after the connection is closed: shutdown
        // waits for that, so the process never exits while libssh2 is still tearing down.
        ActiveTransfers.shared.add(control, host: host)
        defer { ActiveTransfers.shared.remove(control) }
        let connection = try SFTPConnection(transport: transport, destination: host, scene: options.scene)
        defer { connection.close() }
        let plan = try self.plan(direction, on: connection, remote: remote, local: local, options: options)
        return TransferBatch(plan: plan, first: connection, transport: transport, control: control,
                             observer: observer, checkpoints: checkpoints).run()
    }
}

/// Every batch running in the process, so shutdown can pause them all (keeping partial files
/// and checkpoints) within the host's bound.
final class ActiveTransfers: @unchecked Sendable {
    static let shared = ActiveTransfers()
    private let condition = NSCondition()
    private var controls: [ObjectIdentifier: TransferControl] = [:]
    /// The host each batch runs against, as named on the command line or by the caller.
    private var hosts: [ObjectIdentifier: String] = [:]

    func add(_ c: TransferControl, host: String) {
        condition.withLock {
            controls[ObjectIdentifier(c)] = c
            hosts[ObjectIdentifier(c)] = host
        }
    }
    func remove(_ c: TransferControl) {
        condition.withLock {
            controls[ObjectIdentifier(c)] = nil
            hosts[ObjectIdentifier(c)] = nil
            condition.broadcast()
        }
    }

    /// Pauses, without waiting, every batch running against saved host `host` (its route changed
    /// on another device: SFTPSync.swift); partial files and checkpoints are kept for `--resume`,
    /// and each file says `reason`. Returns how many batches were asked. [any-thread]
    @discardableResult
    func pause(host: String, reason: String) -> Int {
        condition.withLock {
            let matching = controls.filter { hosts[$0.key] == host }.values
            matching.forEach { $0.request(.pause, reason: reason) }
            return matching.count
        }
    }

    /// Asks every batch to stop and waits until they have, or until the deadline.
    func stopAll(_ stop: TransferControl.Stop, within seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        // Checkpoint hashing must end in time for the rest of the shutdown.
        controls.values.forEach { $0.request(stop, deadline: deadline.addingTimeInterval(-0.5)) }
        while !controls.isEmpty, Date() < deadline { _ = condition.wait(until: deadline) }
    }
}
