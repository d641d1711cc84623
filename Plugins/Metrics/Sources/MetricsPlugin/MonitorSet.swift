import Foundation
import MetricsCore

/// The hosts a long-running output (watch, serve) shows, kept in step with the saved monitors:
/// `metrics add|rm|pause|resume|move` in another terminal take effect here within a couple of
/// seconds. Hosts named on the command line are shown whether saved or not.
final class MonitorSet {
    let explicit: [String]
    let monitors: MonitorStore
    let transport: Transport
    let scene: UInt64
    let details: Bool
    private(set) var samplers: [Sampler] = []
    private var lastSync = Date.distantPast

    init(explicit: [String], monitors: MonitorStore, transport: Transport, scene: UInt64, details: Bool) {
        self.explicit = explicit
        self.monitors = monitors
        self.transport = transport
        self.scene = scene
        self.details = details
    }

    /// Re-reads the saved monitors at most every 2 s. [the command's thread]
    func sync(force: Bool = false) {
        guard force || Date().timeIntervalSince(lastSync) >= 2 else { return }
        lastSync = Date()
        guard let saved = try? monitors.all() else { return }
        let wanted: [(String, Monitor?)] = explicit.isEmpty ? saved.map { ($0.host, $0) }
            : explicit.map { h in (h, saved.first { $0.host == h }) }
        var next: [Sampler] = []
        for (host, m) in wanted {
            let existing = samplers.first { $0.host == host }
            let s = existing ?? Samplers.acquire(host, config: m?.config ?? .init(), transport: transport, scene: scene,
                                                 paused: m?.paused ?? false, details: details)
            s.setPaused(m?.paused ?? false)
            next.append(s)
        }
        // Removed monitors: their samplers stop (and their connections close).
        for s in samplers where !next.contains(where: { $0 === s }) {
            if details { s.observeDetails(false) }
            Samplers.remove(s.host)
        }
        samplers = next
    }

    var reports: [HostReport] { samplers.map(\.report) }

    func release() {
        if details { for s in samplers { s.observeDetails(false) } }
    }
}
