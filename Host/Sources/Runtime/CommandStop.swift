import Foundation
import TermhostLifecycle
import TermhostSDK

extension HostRuntime {
    /// What a terminating signal does first: asks every running command to stop
    /// (termhost.cancel/1). Shutdown then waits for them, within its bound, before any
    /// destroy() or deinit().
    public func cancelCommands() {
        services.cancellation.cancelAll()
    }

    /// One line per command that had not returned when shutdown was done waiting: it is
    /// abandoned, and neither its instance's destroy() nor its plugin's deinit() is called.
    public func abandonedCommands(_ outcome: ShutdownOutcome) -> [String] {
        // Nested calls of one chain are all still running; name each feature once, outermost first.
        var seen = Set<String>()
        return outcome.stillInCall.compactMap { call in
            guard seen.insert(call.feature.rawValue).inserted else { return nil }
            return "termhost: command '\(VisibleText.of(call.command))' (feature '\(call.feature)') did not return within \(options.shutdownBound) s of being asked to stop; abandoned: its plugin's destroy() and deinit() are not called"
        }
    }
}
