// The Metrics plugin: live server metrics over SSH (one sampling loop per host on an exec
// channel of the SSH plugin's transport service), a terminal dashboard, a Prometheus
// endpoint, and a read-only snapshot service for other plugins.
import CTermhost
import Foundation
import TermhostSDK

final class MetricsFeature: Feature {
    static let info = FeatureInfo(
        id: "org.termhost.metrics", version: "0.1.0", displayName: "Metrics",
        summary: "Live server metrics over SSH: monitors, a terminal dashboard and a Prometheus endpoint.",
        order: 300,
        // ABI.md: a consumer of a feature-provided service is ordered after its provider.
        after: ["org.termhost.ssh"],
        requiresServices: ["termhost.store/1", "org.termhost.ssh.transport/1"],
        providesServices: ["org.termhost.metrics.snapshot/1"],
        commands: [Command("metrics", summary: "Server metrics: add, rm, list, pause, resume, move, show, watch, serve",
                           usage: MetricsCommand.usage)],
        tools: [MetricsTools.getMetrics])

    let host: PluginHost
    /// The tool calls running now, for cancelTool (MetricsTools.swift).
    let toolCalls = ToolCalls()
    /// Reconnects monitors of hosts another device changed (MetricsSync.swift).
    let sync: Events.Subscription?
    init(host: PluginHost, scene: SceneInfo) throws {
        self.host = host
        sync = MetricsSync.subscribe(host)
    }

    func service(_ id: String) -> UnsafeRawPointer? {
        id == TERMHOST_METRICS_SNAPSHOT ? UnsafeRawPointer(SnapshotService.vtable) : nil
    }

    func run(_ command: CommandInvocation) -> Int32 { MetricsCommand(host: host, invocation: command).run() }

    /// NOTES §5: in background nothing samples; connections close (and with them the SSH
    /// plugin's sessions) and reopen on foreground.
    /// The dashboard gives the terminal back first: the process stops right after this.
    func background() {
        TerminalScreen.suspend()
        Samplers.setSleeping(true)
    }
    func foreground() {
        TerminalScreen.resume()
        Samplers.setSleeping(false)
    }
    func expire() { Samplers.setSleeping(true) }

    func shutdown() {
        Dashboard.restoreTerminal()
        sync?.cancel()
        Samplers.stopAll()
    }
}

let plugin = Plugin(id: "org.termhost.metrics", version: "0.1.0", features: [MetricsFeature.self]) { host in
    // Monitors and their order sync (Docs/Sync.md); samples stay on this device.
    _ = try? host.store?.declareSyncable(MonitorStore.collection, merge: .fields)
    _ = try? host.store?.declareSyncCheck(MonitorStore.collection, SyncedMonitorCheck.monitor)
}

@_cdecl("termhost_plugin_entry")
public func termhostPluginEntry() -> UnsafeRawPointer { plugin.entry }
