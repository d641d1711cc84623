import Foundation
import Glibc
import TermhostSDK

/// Runs a plan: creates its directories, then moves its files with up to `maxPerHost` workers,
/// each on its own connection, each file holding a queue slot while it moves.
///
/// The first connection (the one that planned) may have prompted the user; more connections
/// are opened without a terminal (scene 0), so a host that needs a password or an accept-once
/// host key gets exactly one connection and never a second prompt.
final class TransferBatch: @unchecked Sendable {
    let plan: TransferPlan
    let first: SFTPConnection
    let transport: SSHTransport
    let control: TransferControl
    let observer: TransferObserver
    let checkpoints: Checkpoints
    let queue: TransferQueue

    private let lock = NSLock()
    private var next = 0
    private var lost = false
    private var summary = BatchSummary()

    init(plan: TransferPlan, first: SFTPConnection, transport: SSHTransport, control: TransferControl,
         observer: TransferObserver, checkpoints: Checkpoints, queue: TransferQueue = .shared) {
        self.plan = plan
        self.first = first
        self.transport = transport
        self.control = control
        self.observer = observer
        self.checkpoints = checkpoints
        self.queue = queue
    }

    func run() -> BatchSummary {
        let started = Date()
        summary.files = plan.jobs.count + plan.skipped.count + plan.refused.count
        summary.skipped = plan.skipped.count
        plan.notices.forEach(observer.notice)
        observer.batchStarted(files: summary.files, bytes: plan.bytes)
        for (display, reason) in plan.skipped { observer.fileFinished(display, outcome: .skipped(reason: reason)) }
        // What the server listed but may not be written fails on its own; the rest goes on.
        for (display, message) in plan.refused { record(display, .failed(message)) }
        do { try makeDirectories() } catch {
            lock.withLock { summary.failed += plan.jobs.count }
            summary.errors.append(error.message)
            return finish(started)
        }
        let workers = max(1, min(queue.maxPerHost, plan.jobs.count))
        let group = DispatchGroup()
        for index in 0..<workers {
            DispatchQueue.global().async(group: group) { self.work(index) }
        }
        group.wait()
        return finish(started)
    }

    private func finish(_ started: Date) -> BatchSummary {
        lock.withLock {
            summary.seconds = Date().timeIntervalSince(started)
            // Files never started (a stop or a lost connection came first) count as paused:
            // running the same command again with --resume picks them up.
            let ended = summary.done + summary.skipped + summary.paused + summary.cancelled + summary.failed
            summary.notStarted = max(0, summary.files - ended)
            summary.connectionLost = lost
        }
        observer.batchFinished(summary)
        return summary
    }

    private func makeDirectories() throws(SFTPError) {
        switch plan.direction {
        case .download:
            // Relative to the directory above, opened without following links: a link planted
            // for a directory is refused here (and again by each file below it), never entered.
            for dir in plan.directories {
                do throws(SFTPError) {
                    let parent = try LocalTree.parent(of: dir, root: plan.localRoot)
                    defer { parent.close() }
                    try parent.makeDirectory(dir.lastComponent)
                } catch {
                    if error.kind != .refused { throw error }
                    lock.withLock {
                        summary.failed += 1
                        summary.errors.append(error.message)
                    }
                    observer.fileFinished(dir.shown, outcome: .failed(error.message))
                }
            }
        case .upload:
            try first.run { fs, _ throws(SFTPError) in
                for dir in plan.directories {
                    do throws(SFTPError) { try fs.mkdir(dir) } catch {
                        guard try fs.statIfExists(dir)?.isDirectory == true else { throw error }
                    }
                }
            }
        }
    }

    /// The next file, if there is one and `wanted` takes it.
    private func take(if wanted: (FileJob) -> Bool = { _ in true }) -> FileJob? {
        lock.withLock {
            guard !lost, control.requested == .none, next < plan.jobs.count, wanted(plan.jobs[next]) else { return nil }
            defer { next += 1 }
            return plan.jobs[next]
        }
    }

    private func work(_ index: Int) {
        // Extra workers connect before taking a file, so a host that allows only one
        // connection without prompting leaves every file to worker 0.
        let connection: SFTPConnection
        if index == 0 {
            connection = first
        } else {
            guard let extra = try? SFTPConnection(transport: transport, destination: first.destination, scene: 0) else { return }
            connection = extra
        }
        defer { if index != 0 { connection.close() } }
        var pipelining = true
        while let job = take() {
            guard queue.acquire(host: job.host, control: control) else { return }
            if pipelining, pipelined(job) {
                pipelining = pipeline(from: job, on: connection)
            } else {
                record(job, move(job, on: connection))
            }
            queue.release(host: job.host)
        }
    }

    /// Whether a job goes in a pipeline of small files (PipelinedUploads, PipelinedDownloads).
    private func pipelined(_ job: FileJob) -> Bool {
        job.direction == .upload ? PipelinedUploads.fits(job, checkpoints) : PipelinedDownloads.fits(job, checkpoints)
    }

    /// Small files from `first` on, as many as follow it in the plan, many at once on the
    /// connection's own SFTP channel, holding the worker's one queue slot; the files the
    /// pipeline hands back go the usual way after it. False when the channel cannot be opened
    /// (a server that allows one channel per connection) or the pipeline failed: the files
    /// after it (and `first`, if it never started) move the usual way on this connection.
    private func pipeline(from first: FileJob, on connection: SFTPConnection) -> Bool {
        var firstTaken = false
        var retries: [FileJob] = []
        let checkpoints = checkpoints, control = control, observer = observer
        func next() -> FileJob? {
            if !firstTaken {
                firstTaken = true
                return first
            }
            return take { self.pipelined($0) }
        }
        var failed = false
        do {
            let ended = try connection.run { (fs, extensions) throws(SFTPError) -> SFTPError? in
                let pipe = try extensions.start(fs)
                var ended: SFTPError? = switch first.direction {
                case .upload:
                    PipelinedUploads(fs: fs, pipe: pipe, control: control, observer: observer, checkpoints: checkpoints)
                        .run(next: next, record: { record($0, $1) }, retry: { retries.append($0) })
                case .download:
                    PipelinedDownloads(fs: fs, pipe: pipe, control: control, observer: observer, checkpoints: checkpoints)
                        .run(next: next, record: { record($0, $1) }, retry: { retries.append($0) })
                }
                guard let failure = ended else { return nil }
                // A packet still half sent leaves the session unusable (nothing else can be
                // sent on it). Otherwise the pipe, which may hold requests and replies of the run
                // that failed, is dropped: a later use starts on a new channel.
                if fs.packetHalfSent {
                    if failure.kind != .connectionLost {
                        ended = SFTPError(.connectionLost, "\(failure.message); the connection to \(fs.host) is left unusable (a packet half sent)")
                    }
                } else {
                    extensions.release()
                }
                return ended
            }
            if ended?.kind == .connectionLost { lock.withLock { lost = true } }
            failed = ended != nil
        } catch {
            if error.kind == .connectionLost {
                lock.withLock { lost = true }
                if !firstTaken { record(first, .paused(offset: 0, reason: error.message)) }
                return true
            }
            transport.pluginHost.log(.debug, "sftp: \(first.host): small files go one at a time: \(error.message)")
            if !firstTaken { record(first, move(first, on: connection)) }
            return false
        }
        for job in retries { record(job, lock.withLock({ lost }) ? .paused(offset: 0, reason: "sftp: \(job.host): connection lost") : move(job, on: connection)) }
        // After a failed pipeline the files after it go one at a time on this connection.
        return !failed
    }

    /// Extra connections for the segments of a batch's only file, when it is large: each holds a
    /// queue slot of its own, taken only if free now, and is opened without a terminal.
    private func segmentHelpers(for job: FileJob) -> [SFTPConnection] {
        guard plan.jobs.count == 1, plan.bytes >= 2 * Segments.minimum else { return [] }
        // As many as Segments will use: one per 32 MiB at least, the `segments` setting at most.
        let wanted = min(queue.maxPerHost, queue.segments, Int(plan.bytes / Segments.minimum)) - 1
        var helpers: [SFTPConnection] = []
        for _ in 0..<max(0, wanted) where queue.tryAcquire(host: job.host) {
            guard let c = try? SFTPConnection(transport: transport, destination: first.destination, scene: 0) else {
                queue.release(host: job.host)
                break
            }
            helpers.append(c)
        }
        return helpers
    }

    private func move(_ job: FileJob, on connection: SFTPConnection) -> FileOutcome {
        let helpers = segmentHelpers(for: job)
        defer {
            for h in helpers {
                h.close()
                queue.release(host: job.host)
            }
        }
        do {
            let bytes = try connection.run { fs, extensions throws(SFTPError) -> UInt64 in
                switch job.direction {
                case .download:
                    try Download(fs: fs, job: job, control: control, observer: observer, checkpoints: checkpoints, helpers: helpers).run()
                case .upload:
                    try Upload(fs: fs, extensions: extensions, job: job, control: control, observer: observer, checkpoints: checkpoints,
                               helpers: helpers, channels: queue.channels).run()
                }
            }
            return .done(bytes: bytes)
        } catch {
            switch error.kind {
            case .connectionLost:
                lock.withLock { lost = true }
                return .paused(offset: checkpoints.load(job.checkpointKey)?.offset ?? 0, reason: error.message)
            case .paused:
                return .paused(offset: checkpoints.load(job.checkpointKey)?.offset ?? 0, reason: error.message)
            case .stopped:
                return .cancelled
            default:
                return .failed(error.message)
            }
        }
    }

    private func record(_ job: FileJob, _ outcome: FileOutcome) { record(job.display, outcome) }

    private func record(_ display: String, _ outcome: FileOutcome) {
        lock.withLock {
            switch outcome {
            case .done(let bytes): summary.done += 1; summary.bytes = Pacing.saturatingAdd(summary.bytes, bytes)
            case .skipped: break   // counted from the plan
            case .paused(_, let reason): summary.paused += 1; summary.errors.append(reason)
            case .cancelled: summary.cancelled += 1
            case .failed(let message): summary.failed += 1; summary.errors.append(message)
            }
        }
        observer.fileFinished(display, outcome: outcome)
    }
}
