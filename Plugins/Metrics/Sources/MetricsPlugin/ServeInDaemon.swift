import Foundation
import Glibc
import Synchronization
import TermhostSDK

/// `metrics serve --background`: the Prometheus endpoint runs in the daemon, on a thread of its
/// own, after the command returned, until `metrics serve --stop` (or the daemon stops); and the
/// daemon serves it again whenever it starts (ServeIntents), like a started forward.
enum ServeInDaemon {
    private struct Serving {
        let wake: WakePipe
        let done: DispatchSemaphore
        let bound: UInt16
    }
    /// What this daemon serves, by the `--listen` value asked for ("127.0.0.1:9464").
    private static let serving = Mutex<[String: Serving]>([:])

    /// How long stop waits, for every loop together, to notice (each polls its wake pipe).
    static let stopWait = 1.5

    /// Held by a whole `serve --background` or `--stop` (the check, the start or stop, and the
    /// stored intent), so that two clients' never interleave: one endpoint is started once, and
    /// a stop never falls between a start and its intent.
    static let operations = NSLock()

    /// The port `listen` is served on now, if it is.
    static func port(_ listen: String) -> UInt16? { serving.withLock { $0[listen]?.bound } }

    /// Serves the bound listener `fd` for `hosts` (every monitor when empty) until stopped.
    static func start(listen: String, fd: Int32, bound: UInt16, hosts: [String], monitors: MonitorStore,
                      transport: SSHTransport, requestSeconds: Double, host: PluginHost) -> Bool {
        guard let wake = WakePipe() else { close(fd); return false }
        let done = DispatchSemaphore(value: 0)
        let fresh = serving.withLock { all -> Bool in
            guard all[listen] == nil else { return false }
            all[listen] = Serving(wake: wake, done: done, bound: bound)
            return true
        }
        guard fresh else {   // the caller checked under `operations`: only a bug gets here
            close(fd)
            wake.close()
            return true
        }
        let thread = Thread {
            // The monitor set belongs to this thread, as the foreground serve's to its command.
            let set = MonitorSet(explicit: hosts, monitors: monitors, transport: transport, scene: 0, details: false)
            set.sync(force: true)
            Exporter.acceptLoop(fd, set: set, requestSeconds: requestSeconds, wake: wake.readEnd, host: host)
            set.release()
            close(fd)
            done.signal()
        }
        thread.name = "metrics serve in the daemon"
        thread.start()
        host.log(.info, "metrics: serving Prometheus metrics on http://\(listen.prefix { $0 != ":" }):\(bound)/metrics (--listen \(listen))")
        return true
    }

    /// Stops what `listen` names (every one when nil); returns the `--listen` values stopped.
    @discardableResult
    static func stop(_ listen: String?) -> [String] {
        let stopped = serving.withLock { all -> [(String, Serving)] in
            let keys = listen.map { [$0] } ?? Array(all.keys)
            return keys.compactMap { key in all.removeValue(forKey: key).map { (key, $0) } }
        }
        for (_, s) in stopped { s.wake.wake() }
        let deadline = DispatchTime.now() + stopWait
        for (_, s) in stopped {
            if s.done.wait(timeout: deadline) == .success { s.wake.close() }
        }
        return stopped.map(\.0).sorted()
    }
}

/// Which endpoints the user asked the daemon to serve (`metrics serve --background`), in the host
/// store: collection "serving", keyed by the `--listen` value, the hosts as the value. Never
/// synced: what listens on this machine is this machine's business.
struct ServeIntents {
    let store: Store
    static let collection = "serving"

    /// Each endpoint with its hosts; nil hosts for a value that is not a JSON array of names
    /// (damaged: skipped, never read as "every monitor").
    func all() throws(PluginError) -> [(listen: String, hosts: [String]?)] {
        try store.list(ServeIntents.collection).map { entry in
            (entry.key, (try? JSONSerialization.jsonObject(with: Data(entry.value))) as? [String])
        }
    }

    func add(_ listen: String, hosts: [String]) throws(PluginError) {
        let data = (try? JSONSerialization.data(withJSONObject: hosts)) ?? Data("[]".utf8)
        try store.put(ServeIntents.collection, listen, Array(data))
    }

    func remove(_ listen: String?) throws(PluginError) {
        for entry in try all() where listen == nil || entry.listen == listen {
            try store.remove(ServeIntents.collection, entry.listen)
        }
    }
}
