import Foundation
import Synchronization

/// How a running batch is told to stop, and how fast it may go. Shared by its workers.
final class TransferControl: Sendable {
    enum Stop: Sendable { case none, pause, cancel }
    private let stop = Mutex<(what: Stop, deadline: Date, reason: String?)>((.none, .distantFuture, nil))
    /// Bandwidth limit in bytes per second for the whole batch (0: none), like sftp -l.
    let limitBytesPerSecond: UInt64
    private let budget = Mutex<(start: UInt64, sent: UInt64)>((0, 0))

    init(limitBytesPerSecond: UInt64 = 0) { self.limitBytesPerSecond = limitBytesPerSecond }

    var requested: Stop { stop.withLock { $0.what } }
    /// When a pause must be finished by (the host's shutdown bound); far away otherwise.
    var deadline: Date { stop.withLock { $0.deadline } }
    /// `reason` replaces the plain "paused" or "cancelled" in what the files report.
    func request(_ s: Stop, deadline: Date = .distantFuture, reason: String? = nil) {
        stop.withLock {
            if $0.what == .none || s == .cancel { $0 = (s, min(deadline, $0.deadline), reason) }
            else if s == $0.what { $0.deadline = min($0.deadline, deadline) }   // a shutdown's bound still applies
        }
    }

    /// Throws when a stop was requested; the transfer loops call it between chunks.
    func check(_ path: String) throws(SFTPError) {
        let (what, reason) = stop.withLock { ($0.what, $0.reason.map { ": \($0)" } ?? "") }
        switch what {
        case .none: return
        case .pause: throw SFTPError(.paused, "sftp: \(path.shown): paused\(reason)")
        case .cancel: throw SFTPError(.stopped, "sftp: \(path.shown): cancelled\(reason)")
        }
    }

    /// Accounts for bytes moved and sleeps as long as the limit asks.
    func pace(_ bytes: Int) {
        guard limitBytesPerSecond > 0 else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        let wait = budget.withLock { b -> UInt64 in
            if b.start == 0 { b.start = now }
            b.sent = Pacing.saturatingAdd(b.sent, UInt64(max(bytes, 0)))
            return Pacing.wait(due: Pacing.due(start: b.start, sent: b.sent, bytesPerSecond: limitBytesPerSecond), now: now)
        }
        if wait > 0 { usleep(useconds_t(min(wait / 1000, 1_000_000))) }
    }
}

/// What a batch tells its watcher (terminal bar, JSON lines, summary, or an ABI caller).
protocol TransferObserver: AnyObject, Sendable {
    func batchStarted(files: Int, bytes: UInt64)
    func fileStarted(_ path: String, size: UInt64, offset: UInt64)
    func progressed(_ path: String, bytes: Int)
    func fileFinished(_ path: String, outcome: FileOutcome)
    func notice(_ text: String)
    func batchFinished(_ summary: BatchSummary)
}

enum FileOutcome: Sendable {
    case done(bytes: UInt64)
    case skipped(reason: String)
    case paused(offset: UInt64, reason: String)
    case cancelled
    case failed(String)
}

struct BatchSummary: Sendable {
    var files = 0, done = 0, skipped = 0, paused = 0, failed = 0, cancelled = 0, notStarted = 0
    var bytes: UInt64 = 0
    var seconds = 0.0
    var errors: [String] = []
    /// The connection was lost: what did not finish is paused, and may go on on a new one.
    var connectionLost = false
}
