import Foundation
import Glibc
import TermhostSDK

/// `termhost forward start NAME...|--all`: the rules run in the daemon and keep running there
/// (RuleIntents), like a service the user enabled. The command waits until each rule has
/// settled (listening, or failed, or waiting to reconnect), at most `settleSeconds`, and says so.
extension ForwardCommand {
    /// A first connection gets the SSH plugin's connect timeout (15 s by default) and the
    /// authentication after it; past this the rule goes on starting unwatched.
    static let settleSeconds = 45.0

    func startRules(_ args: [String]) throws -> Int32 {
        let o = try parse(args, sub: "start")
        guard o.specs.isEmpty, o.name == nil, o.host == nil, o.all == o.positional.isEmpty else {
            throw UsageError(message: ForwardCommand.startUsage)
        }
        // Names are checked here, before the daemon is asked for: a typo never starts one.
        let selected = o.all ? try rules.all() : try o.positional.map { try rules.find($0) }
        guard !selected.isEmpty else {
            c.print("No forwarding rules to start (add one with 'termhost forward add').")
            return 0
        }
        if let status = c.requireDaemon(host, "termhost forward start") { return status }
        let manager = try self.manager()
        // Every selected rule is started from now on, one already running too: the next
        // daemon starts it again. Only the daemon's own runtime of a rule counts as running;
        // one of a `forward run` ends with that run.
        for rule in selected { try intents.add(rule) }
        let log = host
        let running = manager.startOwned(selected, report: { log.log(.info, VisibleText.of($0)) })
        let states = settled(selected.map(\.id), manager)
        manager.writeStatusNow()
        var status: Int32 = 0
        for rule in selected {
            let label = "forward '\(VisibleText.of(rule.name))'"
            guard let state = states[rule.id] else { continue }
            if running.contains(rule.id) {
                c.print("\(label): already running (\(VisibleText.of(state.text)))")
            } else if state.failed {
                // Nothing ran: the start is not kept, as `forward run` ends (and ssh -N exits).
                try intents.remove(rule.id)
                c.printError("\(label): \(VisibleText.of(state.text)); not started (fix it, then 'termhost forward start \(VisibleText.of(rule.name))' again)")
                status = 1
            } else {
                c.print("\(label): \(VisibleText.of(state.text)); runs in the daemon until 'termhost forward stop \(VisibleText.of(rule.name))'")
            }
        }
        return status
    }

    /// The rules' states once none is still starting (or the bound passed, or Ctrl-C).
    private func settled(_ ids: [String], _ manager: ForwardingManager) -> [String: ForwardingManager.RuleStatus] {
        let deadline = Date().addingTimeInterval(ForwardCommand.settleSeconds)
        while true {
            let states = manager.statuses(of: Set(ids))
            let cancelled = host.cancellation?.isCancelled(scene: c.scene) ?? false
            if cancelled || Date() > deadline || !states.values.contains(where: \.starting) { return states }
            usleep(100_000)   // the manager's queue owns the states; a tenth of a second is plenty for a person
        }
    }
}
