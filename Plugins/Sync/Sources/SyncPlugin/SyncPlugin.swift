// The Sync plugin: replicates other plugins' syncable store collections (declared through
// termhost_host_store_t.declare_syncable) to a vault, through termhost.sync-store/1, which the
// host lends only to the sync provider. The engine and the backends are in SyncCore.
import CTermhost
import Foundation
import Synchronization
import SyncCore
import TermhostSDK

final class SyncFeature: Feature {
    static let info = FeatureInfo(
        id: "org.termhost.sync", version: "0.1.0", displayName: "Sync",
        summary: "Your saved hosts, identities, known hosts and rules on every machine, through a vault folder or a team's PostgreSQL.",
        order: 900, scope: .process, after: ["org.termhost.ssh", "org.termhost.forwarding", "org.termhost.metrics"],
        requiresServices: ["termhost.store/1", "termhost.sync-store/1", "termhost.secrets/1"],
        commands: [Command("sync", summary: "Sync the vault: status, now, pause, resume, conflicts, resolve, reset, backend", usage: SyncCommand.usage)])

    let host: PluginHost
    /// Background pauses syncing (NOTES section 5); a command in foreground may sync.
    private let inBackground = Mutex(false)

    init(host: PluginHost, scene: SceneInfo) throws { self.host = host }

    func run(_ command: CommandInvocation) -> Int32 {
        guard let store = host.store, let syncStore = host.syncStore else {
            command.printError("termhost sync: the host store or its sync service (termhost.sync-store/1) is unavailable")
            return 1
        }
        return SyncCommand(c: command, store: store, syncStore: syncStore, secrets: host.secrets, interact: host.interact,
                           environment: ProcessInfo.processInfo.environment, inBackground: { [self] in inBackground.withLock { $0 } }).run()
    }

    func background() { inBackground.withLock { $0 = true } }
    func foreground() { inBackground.withLock { $0 = false } }
    func expire() { inBackground.withLock { $0 = true } }
    /// A sync runs inside a command, in one call; a sync between two backend calls loses
    /// nothing when the process ends (the outbox is persisted first), so nothing to wait for.
    func shutdown() {}
}

let plugin = Plugin(id: "org.termhost.sync", version: "0.1.0", features: [SyncFeature.self])

@_cdecl("termhost_plugin_entry")
public func termhostPluginEntry() -> UnsafeRawPointer { plugin.entry }
