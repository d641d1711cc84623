import Foundation

/// The bounded, once-only shutdown of every instance; the scopes it tears down are tracked in
/// LifecycleManager.swift.
extension LifecycleManager {
    final class ShutdownState: @unchecked Sendable {
        /// Guards the fields below; waiting callers wait on it for `outcome`.
        let lock = NSCondition()
        var outcome: ShutdownOutcome?
        /// Features not yet asked to shut down, and the one whose shutdown() is running.
        var pending: [String] = []
        var current: String?
        /// Set when a bound expired: the shutdown thread then calls nothing more.
        var stop = false
        /// Instances a command is still inside when destroy() is due: never destroyed.
        var keep: Set<ObjectIdentifier> = []
        let callbacksDone = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let destroyed = DispatchSemaphore(value: 0)
    }

    /// Shuts every instance down in reverse order (workspaces, scenes, then process features)
    /// and destroys them. Three steps, on a thread of its own so that a hung plugin cannot keep
    /// the process alive:
    ///  1. every shutdown() in turn, within `options.shutdownBound`. If one does not return,
    ///     it alone is blamed (`abandoned`); the ones after it were never called
    ///     (`notShutDown`), and nothing more is called.
    ///  2. waiting, until the same deadline, for calls into instances (`calls`: a command that
    ///     was asked to stop) to return. shutdown() may run while a command is still inside
    ///     run_command(): that is how a long command hears a signal.
    ///  3. destroy() of every instance no call is still inside (another bound).
    /// Idempotent: later or concurrent calls wait for and return the same outcome.
    @discardableResult
    public func shutdown() -> ShutdownOutcome {
        let (state, isFirst): (ShutdownState, Bool) = locked {
            if let s = shutdownState { return (s, false) }
            let s = ShutdownState()
            shutdownState = s
            return (s, true)
        }
        guard isFirst else {
            state.lock.lock()
            defer { state.lock.unlock() }
            while state.outcome == nil { state.lock.wait() }
            return state.outcome!
        }
        onEvent(.phaseChanged(.terminating))
        let start = Date()
        let bound = options.shutdownBound
        let deadline = start.addingTimeInterval(bound)
        let order: [Live] = locked {
            let ws = sceneOrder.reversed().flatMap { scenes[$0]!.workspaces.reversed() }
                .flatMap { workspaces[$0]!.instances.reversed() }
            let sc = sceneOrder.reversed().flatMap { scenes[$0]!.instances.reversed() }
            return ws + sc + processInstances.reversed()
        }
        state.pending = order.map(\.id.rawValue)
        let thread = Thread {
            for live in order {
                state.lock.lock()
                state.pending.removeFirst()
                state.current = live.id.rawValue
                state.lock.unlock()
                live.instance.shutdown()
                state.lock.lock()
                state.current = nil
                let stop = state.stop
                state.lock.unlock()
                if stop { return }   // the bound won; leave the rest alone
            }
            state.callbacksDone.signal()
            state.proceed.wait()
            state.lock.lock()
            let (stop, keep) = (state.stop, state.keep)
            state.lock.unlock()
            if stop { return }
            for live in order where !keep.contains(ObjectIdentifier(live.instance)) { live.instance.destroy() }
            state.destroyed.signal()
        }
        thread.name = "termhost-shutdown"
        thread.start()

        var culprit: [String] = [], notCalled: [String] = [], stuck: [CallsInProgress.Call] = []
        var expired = false
        if state.callbacksDone.wait(timeout: .now() + bound) == .timedOut {
            state.lock.lock()
            state.stop = true
            // Blame only the feature whose shutdown() did not return; those after it were
            // never called (before, they were named as if they had hung too).
            culprit = state.current.map { [$0] } ?? []
            notCalled = state.pending
            state.lock.unlock()
            state.proceed.signal()   // in case the last callback returned just now
            expired = true
        } else {
            stuck = calls.waitUntilNone(before: deadline)
            state.lock.lock()
            state.keep = Set(stuck.map(\.instance))
            state.lock.unlock()
            state.proceed.signal()
            if state.destroyed.wait(timeout: .now() + bound) == .timedOut {
                state.lock.lock()
                state.stop = true
                state.lock.unlock()
                expired = true
            }
        }
        let earlier = locked { abandonedEarlier }
        let outcome = ShutdownOutcome(boundExpired: expired || !earlier.isEmpty, abandoned: culprit + earlier,
                                      seconds: Date().timeIntervalSince(start), notShutDown: notCalled,
                                      stillInCall: stuck)
        locked {
            processInstances = []
            scenes = [:]
            sceneOrder = []
            workspaces = [:]
        }
        state.lock.lock()
        state.outcome = outcome
        state.lock.broadcast()
        state.lock.unlock()
        return outcome
    }
}
