import Foundation
import MetricsCore
import Synchronization
import TermhostSDK

/// The process's samplers, one per host, shared by everything that shows that host (the
/// dashboard, the Prometheus endpoint, show, and other plugins through the snapshot service).
/// Process-scoped (NOTES §5): the lifecycle's background and foreground reach every sampler
/// here, and shutdown stops them all.
enum Samplers {
    /// A sampler and how many outputs use it (MonitorSet, show); at 0 it stops.
    private struct Entry { let sampler: Sampler; var users: Int }
    private static let table = Mutex<(samplers: [String: Entry], sleeping: Bool)>(([:], false))

    /// How long a sampler that `metrics show` started keeps running after show returns, when
    /// nothing else uses it: long enough for the snapshot service (another plugin that ran
    /// show through the commands service) and a following show to find it live.
    static let showLinger = 30.0

    /// The host's sampler, started on first use with this configuration; the caller is a user
    /// of it until release().
    /// details: this caller looks at processes and filesystems (undo with observeDetails(false)).
    static func acquire(_ host: String, config: Sampler.Config, transport: SSHTransport, scene: UInt64, paused: Bool,
                        details: Bool = false, unattended: Bool = false) -> Sampler {
        let (sampler, created) = table.withLock { t -> (Sampler, Bool) in
            if let e = t.samplers[host] { t.samplers[host]!.users += 1; return (e.sampler, false) }
            let s = Sampler(host: host, config: config, transport: transport, scene: scene, paused: paused, unattended: unattended)
            if t.sleeping { s.setSleeping(true) }
            t.samplers[host] = Entry(sampler: s, users: 1)
            return (s, true)
        }
        // Before start, so the first channel already collects details.
        if details { sampler.observeDetails(true) }
        if created { sampler.start() }
        return sampler
    }

    /// The caller no longer uses sampler. The last user's release stops it (its connection
    /// closes), after `linger` seconds if given and nobody acquired it meanwhile.
    static func release(_ sampler: Sampler, linger: Double = 0) {
        let last = table.withLock { t -> Bool in
            guard let e = t.samplers[sampler.host], e.sampler === sampler else { return false }
            t.samplers[sampler.host]!.users = max(0, e.users - 1)
            return e.users <= 1
        }
        guard last else { return }
        let stopIfUnused: @Sendable () -> Void = {
            let s = table.withLock { t -> Sampler? in
                guard let e = t.samplers[sampler.host], e.sampler === sampler, e.users == 0 else { return nil }
                return t.samplers.removeValue(forKey: sampler.host)?.sampler
            }
            s?.stop()
        }
        if linger > 0 { DispatchQueue.global().asyncAfter(deadline: .now() + linger, execute: stopIfUnused) }
        else { stopIfUnused() }
    }

    static func find(_ host: String) -> Sampler? { table.withLock { $0.samplers[host]?.sampler } }

    static var all: [Sampler] { table.withLock { $0.samplers.values.map(\.sampler) } }

    /// Stops and forgets the host's sampler whoever uses it (`metrics rm`).
    static func remove(_ host: String) {
        let s = table.withLock { $0.samplers.removeValue(forKey: host)?.sampler }
        s?.stop()
    }

    /// Background: every sampler closes its connection and sleeps; foreground wakes them.
    /// Going to background waits (up to 2 s in all) until every sampler has closed its
    /// connection: SIGTSTP stops the process right after, and a stopped process could not.
    static func setSleeping(_ on: Bool) {
        let list = table.withLock { t -> [Sampler] in t.sleeping = on; return t.samplers.values.map(\.sampler) }
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
        let list = table.withLock { t -> [Sampler] in defer { t.samplers = [:] }; return t.samplers.values.map(\.sampler) }
        // All at once, then one shared deadline: shutdown is bounded (NOTES §5, 3 s) however
        // many hosts there are.
        for s in list { s.requestStop() }
        let deadline = Date().addingTimeInterval(2)
        for s in list { s.stop(wait: max(0, deadline.timeIntervalSinceNow)) }
    }
}

