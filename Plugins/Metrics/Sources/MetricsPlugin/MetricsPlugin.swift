// The Metrics plugin: live server metrics over SSH (one sampling loop per host on an exec
// channel of the SSH plugin's transport service), a terminal dashboard, a Prometheus
// endpoint, and a read-only snapshot service for other plugins.
import CTermhost
import Foundation
import TermhostSDK
import Synchronization

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
        tools: [MetricsTools.getMetrics],
        // Each command's state is its own (a watch's terminal is its scene's, TerminalScreen);
        // samplers are shared under a lock: in the daemon two terminals watch one sampler.
        concurrentCommands: true)

    let host: PluginHost
    /// The tool calls running now, for cancelTool (MetricsTools.swift).
    let toolCalls = ToolCalls()
    /// Reconnects monitors of hosts another device changed (MetricsSync.swift).
    let sync: Events.Subscription?
    /// In the daemon: every monitor sampling for the daemon's life (DaemonSampling).
    private let sampling = Mutex<DaemonSampling?>(nil)
    init(host: PluginHost, scene: SceneInfo) throws {
        self.host = host
        sync = MetricsSync.subscribe(host)
    }

    func service(_ id: String) -> UnsafeRawPointer? {
        id == TERMHOST_METRICS_SNAPSHOT ? UnsafeRawPointer(SnapshotService.vtable) : nil
    }

    func run(_ command: CommandInvocation) -> Int32 { MetricsCommand(host: host, invocation: command).run() }

    /// In the daemon, the endpoints the user asked it to serve (`metrics serve --background`)
    /// are served again, each time the daemon starts; never in the CLI.
    func activate() throws {
        guard host.isDaemon, let store = host.store else { return }
        if let transport = SSHTransport(host: host), transport.offersOpenExec {
            let keeper = DaemonSampling(monitors: MonitorStore(store: store), transport: transport, host: host)
            sampling.withLock { $0 = keeper }
        }
        let wanted: [(listen: String, hosts: [String]?)]
        do { wanted = try ServeIntents(store: store).all() } catch {
            host.log(.warning, "metrics: the endpoints to serve cannot be read: \(error.message)")
            return
        }
        for (listen, hosts) in wanted {
            guard let hosts else {
                host.log(.warning, "metrics: the stored endpoint --listen \(VisibleText.of(listen)) cannot be read; not served ('termhost metrics serve --stop --listen ...' forgets it)")
                continue
            }
            if let problem = Exporter.serveInDaemon(listen: listen, hosts: hosts, monitors: MonitorStore(store: store), host: host) {
                host.log(.error, "metrics: cannot serve --listen \(VisibleText.of(listen)) again: \(problem)")
            }
        }
    }

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
        ServeInDaemon.stop(nil)
        sampling.withLock { s in defer { s = nil }; return s }?.stop(waiting: 0.5)
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
