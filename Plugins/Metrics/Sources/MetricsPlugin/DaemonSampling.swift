import Foundation
import Glibc
import TermhostSDK

/// In the daemon every saved monitor samples all the time, not only while something shows it:
/// one sampler per host for the daemon's life, which every `metrics watch`, `show`, `serve`
/// and the snapshot service there share, so the last five minutes of history are there when a
/// terminal attaches. A thread keeps the set in step with the saved monitors (`metrics add`,
/// `rm`, `pause`, a synced change) every 2 s, as a watch does. Never in the CLI: a command
/// there samples only what it shows, while it runs.
final class DaemonSampling: Sendable {
    private let wake: WakePipe
    private let done = DispatchSemaphore(value: 0)

    /// nil when no pipe can be made (the daemon then samples only what is shown).
    init?(monitors: MonitorStore, transport: SSHTransport, host: PluginHost) {
        guard let wake = WakePipe() else { return nil }
        self.wake = wake
        let done = self.done
        let thread = Thread {
            // The set belongs to this thread, as a watch's to its command.
            let set = MonitorSet(explicit: [], monitors: monitors, transport: transport, scene: 0, details: false)
            set.sync(force: true)
            host.log(.info, "metrics: the daemon samples every monitor (\(set.samplers.count) now)")
            while true {
                var pfd = pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)
                if poll(&pfd, 1, 2000) > 0 { break }
                set.sync()
            }
            set.release()
            done.signal()
        }
        thread.name = "metrics sampling in the daemon"
        thread.start()
    }

    /// Stops keeping the set (its samplers stop unless an output still uses them); waits at
    /// most `seconds` for the thread.
    func stop(waiting seconds: Double) {
        wake.wake()
        if done.wait(timeout: .now() + seconds) == .success { wake.close() }
    }
}
