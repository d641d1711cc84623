import Foundation
import MetricsCore
import Synchronization

/// The process's samplers, one per host, shared by everything that shows that host (the
/// dashboard, the Prometheus endpoint, show, and other plugins through the snapshot service).
/// Process-scoped (NOTES §5): the lifecycle's background and foreground reach every sampler
/// here, and shutdown stops them all.
enum Samplers {
    private static let table = Mutex<(samplers: [String: Sampler], sleeping: Bool)>(([:], false))

    /// The host's sampler, started on first use with this configuration.
    /// details: this caller looks at processes and filesystems (undo with observeDetails(false)).
    static func acquire(_ host: String, config: Sampler.Config, transport: Transport, scene: UInt64, paused: Bool,
                        details: Bool = false) -> Sampler {
        let (sampler, created) = table.withLock { t -> (Sampler, Bool) in
            if let s = t.samplers[host] { return (s, false) }
            let s = Sampler(host: host, config: config, transport: transport, scene: scene, paused: paused)
            if t.sleeping { s.setSleeping(true) }
            t.samplers[host] = s
            return (s, true)
        }
        // Before start, so the first channel already collects details.
        if details { sampler.observeDetails(true) }
        if created { sampler.start() }
        return sampler
    }

    static func find(_ host: String) -> Sampler? { table.withLock { $0.samplers[host] } }

    static var all: [Sampler] { table.withLock { Array($0.samplers.values) } }

    /// Stops and forgets the host's sampler (its connection closes).
    static func remove(_ host: String) {
        let s = table.withLock { $0.samplers.removeValue(forKey: host) }
        s?.stop()
    }

    /// Background: every sampler closes its connection and sleeps; foreground wakes them.
    /// Going to background waits (up to 2 s in all) until every sampler has closed its
    /// connection: SIGTSTP stops the process right after, and a stopped process could not.
    static func setSleeping(_ on: Bool) {
        let list = table.withLock { t -> [Sampler] in t.sleeping = on; return Array(t.samplers.values) }
        for s in list { s.setSleeping(on) }
        guard on else { return }
        let deadline = Date().addingTimeInterval(2)
        for s in list {
            _ = s.wait(timeout: max(0, deadline.timeIntervalSinceNow)) { r in
                switch r.state { case .sleeping, .paused, .failed: true; default: false }
            }
        }
    }

    static func stopAll() {
        let list = table.withLock { t -> [Sampler] in defer { t.samplers = [:] }; return Array(t.samplers.values) }
        // All at once, then one shared deadline: shutdown is bounded (NOTES §5, 3 s) however
        // many hosts there are.
        for s in list { s.requestStop() }
        let deadline = Date().addingTimeInterval(2)
        for s in list { s.stop(wait: max(0, deadline.timeIntervalSinceNow)) }
    }
}

