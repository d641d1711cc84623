import Foundation
import Glibc
import Synchronization
import TermhostSDK

/// Shows a batch to a person or a script: a progress bar with rate and ETA when stderr is a
/// terminal, one summary line otherwise, or JSON lines on stdout with --json.
final class ConsoleProgress: TransferObserver, Sendable {
    enum Mode { case bar, summary, json }
    let mode: Mode
    let out: Int32, err: Int32
    let verb: String
    /// What the workers report, from any of their threads.
    private struct Counts {
        /// movedBytes counts bytes kept from a paused run too (for the fraction done); the rate
        /// counts only what this run moved.
        var totalBytes: UInt64 = 0, movedBytes: UInt64 = 0, movedNow: UInt64 = 0, files = 0, finished = 0
        var started = Date()
        var lastDraw = Date.distantPast
        var fileBytes: [String: UInt64] = [:]
        var lastEvent: [String: Date] = [:]
    }
    private let lock = Mutex(Counts())

    init(mode: Mode, out: Int32, err: Int32, verb: String) {
        self.mode = mode
        self.out = out
        self.err = err
        self.verb = verb
    }

    static func mode(json: Bool, stderr: Int32) -> Mode { json ? .json : isatty(stderr) == 1 ? .bar : .summary }

    func batchStarted(files: Int, bytes: UInt64) {
        lock.withLock {
            $0.files = files
            $0.totalBytes = bytes
            $0.started = Date()
        }
        if mode == .json { event("batch-start", ["files": "\(files)", "bytes": "\(bytes)"]) }
    }

    func fileStarted(_ path: String, size: UInt64, offset: UInt64) {
        lock.withLock {
            $0.fileBytes[path] = offset
            // Sizes and offsets are the server's (or a checkpoint's) word: sums saturate.
            $0.movedBytes = Pacing.saturatingAdd($0.movedBytes, offset)
        }
        if mode == .json { event("file-start", ["path": JSONText.quoted(path), "size": "\(size)", "offset": "\(offset)"]) }
    }

    func progressed(_ path: String, bytes: Int) {
        let now = Date()
        let json = mode == .json
        let (draw, fileTotal): (Bool, UInt64) = lock.withLock { c in
            let n = UInt64(max(bytes, 0))
            c.movedBytes = Pacing.saturatingAdd(c.movedBytes, n)
            c.movedNow = Pacing.saturatingAdd(c.movedNow, n)
            c.fileBytes[path] = Pacing.saturatingAdd(c.fileBytes[path, default: 0], n)
            let due = now.timeIntervalSince(json ? c.lastEvent[path] ?? .distantPast : c.lastDraw) >= (json ? 0.25 : 0.1)
            if due { if json { c.lastEvent[path] = now } else { c.lastDraw = now } }
            return (due, c.fileBytes[path] ?? 0)
        }
        guard draw else { return }
        switch mode {
        case .bar: drawBar(current: path)
        case .json: event("progress", ["path": JSONText.quoted(path), "bytes": "\(fileTotal)", "rate": "\(ConsoleProgress.bytes(rate()))"])
        case .summary: break
        }
    }

    func fileFinished(_ path: String, outcome: FileOutcome) {
        lock.withLock {
            $0.finished += 1
            $0.fileBytes[path] = nil
        }
        switch (mode, outcome) {
        case (.json, .done(let bytes)): event("file-done", ["path": JSONText.quoted(path), "bytes": "\(bytes)"])
        case (.json, .skipped(let why)): event("file-skipped", ["path": JSONText.quoted(path), "reason": JSONText.quoted(why)])
        case (.json, .paused(let offset, let why)): event("file-paused", ["path": JSONText.quoted(path), "offset": "\(offset)", "reason": JSONText.quoted(why)])
        case (.json, .cancelled): event("file-cancelled", ["path": JSONText.quoted(path)])
        case (.json, .failed(let why)): event("file-error", ["path": JSONText.quoted(path), "message": JSONText.quoted(why)])
        case (_, .failed(let why)), (_, .paused(_, let why)): line(err, why)
        case (_, .skipped(let why)): line(err, "sftp: skipped: \(why)")
        default: if mode == .bar { drawBar(current: path) }
        }
    }

    func notice(_ text: String) {
        if mode == .json { event("notice", ["message": JSONText.quoted(text)]) } else { line(err, "sftp: " + text) }
    }

    func batchFinished(_ s: BatchSummary) {
        if mode == .json {
            event("batch-done", ["files": "\(s.files)", "done": "\(s.done)", "skipped": "\(s.skipped)", "paused": "\(s.paused)",
                                 "not_started": "\(s.notStarted)", "failed": "\(s.failed)", "cancelled": "\(s.cancelled)",
                                 "bytes": "\(s.bytes)", "seconds": String(format: "%.3f", s.seconds)])
            return
        }
        if mode == .bar { write(err, "\r\u{1B}[K") }
        // The rate is this run's bytes over its time: bytes kept from before a pause moved earlier.
        let now = lock.withLock { $0.movedNow }
        var parts = ["\(verb) \(s.done) of \(s.files) file\(s.files == 1 ? "" : "s"), \(ConsoleProgress.size(s.bytes)) in \(String(format: "%.1f", s.seconds)) s (\(ConsoleProgress.size(ConsoleProgress.bytes(Double(now) / max(s.seconds, 0.001))))/s)"]
        if s.skipped > 0 { parts.append("\(s.skipped) skipped") }
        if s.failed > 0 { parts.append("\(s.failed) failed") }
        if s.paused + s.notStarted > 0 { parts.append("\(s.paused + s.notStarted) paused (run again with --resume)") }
        if s.cancelled > 0 { parts.append("\(s.cancelled) cancelled") }
        line(out, parts.joined(separator: ", "))
    }

    // MARK: drawing

    private func rate() -> Double {
        let (moved, started) = lock.withLock { ($0.movedNow, $0.started) }
        return Double(moved) / max(Date().timeIntervalSince(started), 0.001)
    }

    private func drawBar(current: String) {
        let (moved, total, done, count) = lock.withLock { ($0.movedBytes, $0.totalBytes, $0.finished, $0.files) }
        let fraction = total > 0 ? min(Double(moved) / Double(total), 1) : 1
        let speed = rate()
        // At most 99999 hours: a claimed size of 2^63 bytes at a slow rate would not fit an Int.
        let eta = speed > 0 && total > moved ? Int(min(Double(total - moved) / speed, 359_996_400)) : 0
        var columns = winsize()
        let width = ioctl(err, UInt(TIOCGWINSZ), &columns) == 0 && columns.ws_col > 0 ? Int(columns.ws_col) : 80
        let stats = " \(String(Int(fraction * 100)).rightAligned(3))% \(ConsoleProgress.size(moved)) \(ConsoleProgress.size(ConsoleProgress.bytes(speed)))/s ETA \(eta / 60):\(String(eta % 60).zeroPadded(2)) \(done)/\(count)"
        let barWidth = max(10, min(30, width - stats.count - 24))
        let filled = Int(fraction * Double(barWidth))
        let bar = "[" + String(repeating: "=", count: filled) + String(repeating: " ", count: barWidth - filled) + "]"
        let nameRoom = max(8, width - stats.count - bar.count - 2)
        let name = current.count > nameRoom ? "..." + current.suffix(nameRoom - 3) : current
        write(err, "\r\u{1B}[K\(name.shown) \(bar)\(stats)")
    }

    /// A rate as bytes, clamped: UInt64(Double) traps past 2^64.
    static func bytes(_ value: Double) -> UInt64 { value.isFinite && value > 0 ? UInt64(min(value, 1.8e19)) : 0 }

    static func size(_ bytes: UInt64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(bytes), unit = 0
        while value >= 1000, unit < units.count - 1 { value /= 1000; unit += 1 }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f ", value) + units[unit]
    }

    private func event(_ name: String, _ fields: [String: String]) {
        let body = fields.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
        line(out, "{\"event\":\"\(name)\"\(body.isEmpty ? "" : ",")\(body)}")
    }

    private func line(_ fd: Int32, _ text: String) {
        if mode == .bar && fd == err { write(err, "\r\u{1B}[K") }
        write(fd, text + "\n")
    }

    /// Under the lock: lines of several workers never interleave.
    private func write(_ fd: Int32, _ text: String) {
        lock.withLock { _ in
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                if n < 0 { if errno == EINTR { continue } else { return } }
                bytes = bytes.dropFirst(n)
            }
        }
    }
}
