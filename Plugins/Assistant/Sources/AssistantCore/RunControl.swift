import Synchronization

/// The admission fence of one run (NOTES section 5, shutdown order): once `stop()` is called,
/// no model request and no tool call starts, and the calls already running are cancelled
/// through the runner. The engine asks `admit` before each step and `release` after a call.
///
/// Threading: every method may be called from any thread; `stop()` comes from a Ctrl-C
/// handler or the host's shutdown while the engine runs elsewhere.
public final class RunControl: Sendable {
    private struct State {
        var stopped = false
        var running: Set<UInt64> = []
        var runner: (any RunToolRunner)?
    }
    private let state = Mutex(State())

    public init() {}

    public var isStopped: Bool { state.withLock { $0.stopped } }

    /// Closes admission and cancels every running call; returns at once (the engine answers
    /// each call and returns, the caller waits for that).
    public func stop() {
        let (runner, running) = state.withLock { s -> ((any RunToolRunner)?, Set<UInt64>) in
            s.stopped = true
            return (s.runner, s.running)
        }
        for number in running.sorted() { runner?.cancel(number: number) }
    }

    /// Registers a call about to start; false once stopped (the call must not start).
    func admit(_ number: UInt64, runner: any RunToolRunner) -> Bool {
        state.withLock { s in
            guard !s.stopped else { return false }
            s.runner = runner
            s.running.insert(number)
            return true
        }
    }

    func release(_ number: UInt64) {
        _ = state.withLock { $0.running.remove(number) }
    }
}
