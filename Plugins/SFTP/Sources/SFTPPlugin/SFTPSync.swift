import Foundation
import TermhostSDK

/// A transfer never goes on over a route another device replaced: when the SSH plugin reports
/// a saved host's route changed or removed (SSHHostChange), the batches running against that
/// host pause, as at shutdown: partial files and checkpoints are kept, `termhost sftp paused`
/// lists them, and `--resume` continues them over the new route. Each file reports the reason.
enum SFTPSync {
    static func subscribe(_ host: PluginHost) -> Events.Subscription? {
        try? host.events?.onSSHHostChange(log: host) { change in
            let reason = VisibleText.of(change.reason)
            if ActiveTransfers.shared.pause(host: change.host, reason: reason) > 0 {
                host.log(.info, "\(reason); its transfers pause (resume them with --resume)")
            }
        }
    }
}
