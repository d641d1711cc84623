import Foundation
import Glibc
import Synchronization

/// Where a `forward run` prints its state changes, without the manager's queue ever waiting on
/// the user's terminal: lines go to a queue of their own, which writes them to a duplicate of
/// the command's stdout. A terminal paused with Ctrl-S, or a pipe nobody reads, then holds up
/// this run's printing only, never the daemon's other rules (their pumps wait on that queue).
/// Past `limit` unwritten lines, new ones are dropped and counted, and the count is printed
/// once the writer catches up. After `close()` nothing more is written; the duplicate is closed
/// after the last queued write, so no write ever reaches a descriptor number reused meanwhile.
final class RunOutput: Sendable {
    static let limit = 1000
    private let fd: Int32
    private let writer = DispatchQueue(label: "termhost.forwarding.run-output")
    private struct State { var queued = 0; var dropped = 0; var closed = false }
    private let state = Mutex(State())

    /// nil when the descriptor cannot be duplicated (out of descriptors): lines then go nowhere.
    init?(duplicating stdout: Int32) {
        let copy = fcntl(stdout, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return nil }
        fd = copy
    }

    /// Queues a line (a newline is added). Never blocks.
    func send(_ line: String) {
        let accepted = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            guard s.queued < RunOutput.limit else { s.dropped += 1; return false }
            s.queued += 1
            return true
        }
        guard accepted else { return }
        writer.async { [self] in
            let dropped = state.withLock { s -> Int in
                s.queued -= 1
                defer { s.dropped = 0 }
                return s.dropped
            }
            if dropped > 0 { write("forward: \(dropped) line(s) not shown: this output was not being read\n") }
            write(line + "\n")
        }
    }

    /// How long close() waits for the queued lines (the last ones say how the run ended) before
    /// it returns anyway: a terminal nobody reads must not hold the command past the host's
    /// shutdown bound (3 s).
    static let drainSeconds = 1.0

    /// No more lines; waits for those already queued to be written (at most `drainSeconds`),
    /// and the descriptor closes after them.
    func close() {
        state.withLock { $0.closed = true }
        let drained = DispatchSemaphore(value: 0)
        writer.async { [fd] in
            _ = Glibc.close(fd)
            drained.signal()
        }
        _ = drained.wait(timeout: .now() + RunOutput.drainSeconds)
    }

    private func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue } else { return } }
            bytes = bytes.dropFirst(n)
        }
    }
}
