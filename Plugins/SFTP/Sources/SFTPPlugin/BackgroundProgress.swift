import Foundation
import Synchronization

/// What a background transfer has done so far, over all its runs (a run ends at a pause or a
/// lost connection; the next one moves only what is left): the figures `termhost transfers`
/// shows. An observer of each run's batch.
final class BackgroundProgress: TransferObserver, Sendable {
    struct Figures: Sendable {
        var files = 0, done = 0, skipped = 0, failed = 0
        var totalBytes: UInt64 = 0
        /// Bytes of finished files, of paused ones' partials, and of the files moving now.
        var doneBytes: UInt64 = 0
        var kept: [String: UInt64] = [:]
        var moving: [String: UInt64] = [:]
        /// The offset the last file that went on from a checkpoint started at (0: none did).
        var resumedFrom: UInt64 = 0
        /// This run's bytes and start, for the rate.
        var runBytes: UInt64 = 0
        var runStarted = Date()
        /// Files that need no more work (done, skipped, failed, cancelled), by display name:
        /// the next run leaves them out.
        var finished: Set<String> = []
        var lastError: String?
        var started = false

        var movedBytes: UInt64 {
            (Array(kept.values) + Array(moving.values)).reduce(doneBytes) { Pacing.saturatingAdd($0, $1) }
        }
        var rate: Double {
            let seconds = Date().timeIntervalSince(runStarted)
            return moving.isEmpty || seconds <= 0 ? 0 : Double(runBytes) / seconds
        }
    }
    private let figures = Mutex(Figures())

    var now: Figures { figures.withLock { $0 } }

    func batchStarted(files: Int, bytes: UInt64) {
        figures.withLock {
            // The first run's plan is the whole transfer; later runs are what is left of it.
            if !$0.started { ($0.files, $0.totalBytes, $0.started) = (files, bytes, true) }
            ($0.runBytes, $0.runStarted) = (0, Date())
        }
    }

    func fileStarted(_ path: String, size: UInt64, offset: UInt64) {
        figures.withLock {
            $0.kept[path] = nil
            $0.moving[path] = offset
            if offset > 0 { $0.resumedFrom = offset }
        }
    }

    func progressed(_ path: String, bytes: Int) {
        figures.withLock {
            let n = UInt64(max(bytes, 0))
            $0.moving[path] = Pacing.saturatingAdd($0.moving[path, default: 0], n)
            $0.runBytes = Pacing.saturatingAdd($0.runBytes, n)
        }
    }

    func fileFinished(_ path: String, outcome: FileOutcome) {
        figures.withLock {
            $0.moving[path] = nil
            switch outcome {
            case .done(let bytes):
                $0.done += 1
                $0.doneBytes = Pacing.saturatingAdd($0.doneBytes, bytes)
                $0.finished.insert(path)
            case .skipped:
                $0.skipped += 1
                $0.finished.insert(path)
            case .paused(let offset, let reason):
                $0.kept[path] = offset
                $0.lastError = reason
            case .cancelled:
                $0.finished.insert(path)
            case .failed(let message):
                $0.failed += 1
                $0.finished.insert(path)
                $0.lastError = message
            }
        }
    }

    func notice(_ text: String) {}
    func batchFinished(_ summary: BatchSummary) {}
}
