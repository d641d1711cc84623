import AssistantCore
import Synchronization

/// The runs in progress in this process, so the feature's shutdown can stop any the
/// cancellation of their command did not reach (NOTES section 5: admission fenced, tools
/// cancelled and awaited, the run saved as stopped, within the host's 3 s bound).
enum ActiveRuns {
    private static let runs = Mutex<[ObjectIdentifier: RunControl]>([:])

    static func insert(_ control: RunControl) { runs.withLock { $0[ObjectIdentifier(control)] = control } }
    static func remove(_ control: RunControl) { _ = runs.withLock { $0.removeValue(forKey: ObjectIdentifier(control)) } }

    /// Stops every run and waits until each has returned (saved as stopped), at most `seconds`.
    static func stopAll(waitingAtMost seconds: Double) {
        for control in runs.withLock({ Array($0.values) }) { control.stop() }
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline, !runs.withLock({ $0.isEmpty }) {
            // The run's own thread removes it once saved; a short poll keeps this free of
            // another lock order with the engine.
            usleep(10_000)
        }
    }
}

import Glibc
