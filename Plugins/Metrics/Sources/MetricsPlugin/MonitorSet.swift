import Foundation
import MetricsCore
import TermhostSDK

/// The hosts a long-running output (watch, serve) shows, kept in step with the saved monitors:
/// `metrics add|rm|pause|resume|move` in another terminal take effect here within a couple of
/// seconds. Hosts named on the command line are shown whether saved or not.
final class MonitorSet {
    let explicit: [String]
    let monitors: MonitorStore
    let transport: SSHTransport
    let scene: UInt64
    let details: Bool
    private(set) var samplers: [Sampler] = []
    private var lastSync = Date.distantPast
    /// What the last sync saw, per host: only a change is passed on to the sampler.
    private var pausedFlags: [String: Bool] = [:]
    private var resumes: [String: Int] = [:]

    init(explicit: [String], monitors: MonitorStore, transport: SSHTransport, scene: UInt64, details: Bool) {
        self.explicit = explicit
        self.monitors = monitors
        self.transport = transport
        self.scene = scene
        self.details = details
    }

    /// Re-reads the saved monitors at most every 2 s. [the command's thread]
    /// A sampler hears only about changes: pause and resume flips, and a new `metrics resume`
    /// (which retries a failed host at once); re-reading the same state does nothing to it.
    func sync(force: Bool = false) {
        guard force || Date().timeIntervalSince(lastSync) >= 2 else { return }
        lastSync = Date()
        guard let saved = try? monitors.all() else { return }
        let wanted: [(String, Monitor?)] = explicit.isEmpty ? saved.map { ($0.host, $0) }
            : explicit.map { h in (h, saved.first { $0.host == h }) }
        var next: [Sampler] = []
        for (host, m) in wanted {
            let paused = m?.paused ?? false
            // A sampler `metrics rm` stopped (and a quick `add` brought the monitor back) is
            // no longer the process's: a new one is acquired.
            if let s = samplers.first(where: { $0.host == host }), Samplers.find(host) === s {
                if pausedFlags[host] != paused { s.setPaused(paused) }
                if (m?.resumes ?? 0) != resumes[host] { s.retry() }
                next.append(s)
            } else {
                next.append(Samplers.acquire(host, config: m?.config ?? .init(), transport: transport, scene: scene,
                                             paused: paused, details: details))
            }
            pausedFlags[host] = paused
            resumes[host] = m?.resumes ?? 0
        }
        // Removed monitors: their samplers stop (and their connections close) unless another
        // output of this process still uses them.
        for s in samplers where !next.contains(where: { $0 === s }) {
            if details { s.observeDetails(false) }
            Samplers.release(s)
            // A replaced sampler's host is still shown: its flags are the new sampler's now.
            if !next.contains(where: { $0.host == s.host }) {
                pausedFlags[s.host] = nil
                resumes[s.host] = nil
            }
        }
        samplers = next
    }

    var reports: [HostReport] { samplers.map(\.report) }

    /// The output ends: its samplers stop unless another output of this process uses them.
    func release() {
        for s in samplers {
            if details { s.observeDetails(false) }
            Samplers.release(s)
        }
        samplers = []
    }
}
