import Foundation
import TermhostLifecycle
import TermhostSDK

extension HostRuntime {
    /// What a terminating signal does before shutdown: asks every running command to stop
    /// (termhost.cancel/1), then waits for them to return, at most the shutdown bound. Returns
    /// one message per command that did not: such a command is abandoned, and shutdown then
    /// neither destroys its instance nor calls its plugin's deinit().
    public func stopCommands() -> [String] {
        services.cancellation.cancelAll()
        let stuck = lifecycle.calls.waitUntilNone(before: Date().addingTimeInterval(options.shutdownBound))
        // Nested calls of one chain are all still running; name the outermost command once.
        var seen = Set<String>()
        return stuck.compactMap { call in
            guard seen.insert(call.feature.rawValue).inserted else { return nil }
            return "termhost: command '\(VisibleText.of(call.command))' (feature '\(call.feature)') did not return within \(options.shutdownBound) s of being asked to stop; abandoned: its plugin's destroy() and deinit() are not called"
        }
    }
}
