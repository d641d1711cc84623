import Foundation
import TermhostSDK

/// Keeps `forward run` off records another device replaced: a running rule whose own record
/// changed (SyncApplyingWatch on "rules", after the write) stops, says why and starts again with
/// the new rule, or stays stopped when it was removed; a rule whose host's route changed
/// (SSHHostChange, from the SSH plugin) restarts on a fresh connection, which reads the new
/// host record, or stays stopped when the host was removed. An edit that leaves a running rule
/// as it is restarts nothing.
final class ForwardingSync: Sendable {
    private let rules: SyncApplyingWatch?
    private let hosts: Events.Subscription?

    init(manager: ForwardingManager, host: PluginHost) {
        rules = try? SyncApplyingWatch(host: host, namespace: "org.termhost.forwarding", collections: [RuleStore.collection]) { [weak manager] change in
            let id = change.record.key
            let before = change.before.flatMap { try? JSONDecoder().decode(ForwardRule.self, from: Data($0)) }
            let after = change.after.flatMap { try? JSONDecoder().decode(ForwardRule.self, from: Data($0)) }
            let name = VisibleText.of(after?.name ?? before?.name ?? id)
            let what = change.after == nil ? "removed" : "changed"
            manager?.restart(where: { $0.id == id && $0 != after },
                             reason: "rule '\(name)' was \(what) on another device (sync)") { _ in after }
        }
        hosts = try? host.events?.onSSHHostChange(log: host) { [weak manager] change in
            manager?.restart(where: { $0.host == change.host }, reason: VisibleText.of(change.reason)) { change.deleted ? nil : $0 }
        }
    }

    func cancel() {
        rules?.cancel()
        hosts?.cancel()
    }
}
