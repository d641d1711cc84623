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
        commands: [Command("sync", summary: "Sync the vault: status, now, watch, pause, resume, conflicts, resolve, reset, backend", usage: SyncCommand.usage)])

    let host: PluginHost
    /// Background pauses syncing (NOTES section 5); a command in foreground may sync.
    private let inBackground = Mutex(false)

    /// The sync loop of this process, and what keeps its syncs one at a time.
    let sync: BackgroundSync

    init(host: PluginHost, scene: SceneInfo) throws {
        self.host = host
        sync = BackgroundSync(host: host)
    }

    func activate() throws { sync.activate() }

    func run(_ command: CommandInvocation) -> Int32 {
        // Required services: the host activates this feature only with all three.
        guard let store = host.store, let syncStore = host.syncStore, let secrets = host.secrets else {
            command.printError("termhost sync: the host store, its sync service (termhost.sync-store/1) or the secrets service is unavailable")
            return 1
        }
        return sync.running(command) {
            SyncCommand(c: command, store: store, syncStore: syncStore, secrets: secrets, interact: host.interact,
                        environment: ProcessInfo.processInfo.environment, inBackground: { [self] in inBackground.withLock { $0 } },
                        watch: { [sync] json in sync.watch(command, json: json) }).run()
        }
    }

    func background() {
        inBackground.withLock { $0 = true }
        sync.background()
    }
    func foreground() {
        inBackground.withLock { $0 = false }
        sync.foreground()
    }
    func expire() {
        inBackground.withLock { $0 = true }
        sync.expire()
    }
    /// Stops the loop, waiting at most `BackgroundSync.shutdownWait` for a sync in flight.
    func shutdown() { sync.shutdown() }
}

let plugin = Plugin(id: "org.termhost.sync", version: "0.1.0", features: [SyncFeature.self])

@_cdecl("termhost_plugin_entry")
public func termhostPluginEntry() -> UnsafeRawPointer { plugin.entry }
