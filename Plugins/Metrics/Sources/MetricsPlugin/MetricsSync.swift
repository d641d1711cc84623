import Foundation
import TermhostSDK

/// A live monitor never keeps sampling over a route another device replaced: when the SSH
/// plugin reports a saved host's route changed (SSHHostChange), that host's sampler closes its
/// connection and opens a new one, which reads the new record. A removed host's monitor fails
/// to connect and says so; a monitor removed on another device stops with the next re-read of
/// the saved monitors (MonitorSet, within 2 s).
enum MetricsSync {
    static func subscribe(_ host: PluginHost) -> Events.Subscription? {
        try? host.events?.onSSHHostChange(log: host) { change in
            guard let sampler = Samplers.find(change.host) else { return }
            host.log(.info, "\(VisibleText.of(change.reason)); its monitor reconnects")
            sampler.reconnect()
        }
    }
}
