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

    /// The user-facing lines for a shutdown that overran its bound: only the feature whose
    /// shutdown() did not return is named (the ones after it were never called).
    public func shutdownProblems(_ outcome: ShutdownOutcome) -> [String] {
        guard outcome.boundExpired else { return [] }
        let bound = options.shutdownBound
        let after = outcome.notShutDown.count
        let rest = after == 0 ? "" : " (\(after) feature\(after == 1 ? "" : "s") after it \(after == 1 ? "was" : "were") not shut down)"
        if outcome.abandoned.isEmpty {
            return ["termhost: shutdown did not finish within \(bound) s; exiting anyway"]
        }
        // The count belongs to the first one, the culprit of this shutdown; any others were
        // abandoned earlier (a detached scene, a closed workspace).
        return outcome.abandoned.enumerated().map { i, id in
            "termhost: feature '\(id)' did not return from shutdown() within \(bound) s; exiting without it\(i == 0 ? rest : "")"
        }
    }
}
