import Glibc
import TermhostSDK

/// Discards a paused transfer: its partial file (local, or remote over SFTP), then its
/// checkpoint. Used by `sftp cancel` and by cancelling a background transfer.
struct PausedDiscard {
    let transport: SSHTransport
    let checkpoints: Checkpoints
    /// Where a connection for a remote partial may prompt (0: nowhere).
    let scene: UInt64

    /// nil once both are gone; otherwise what could not be removed (the checkpoint is then
    /// kept, so `sftp paused` still lists the transfer).
    func discard(_ key: String, _ c: Checkpoint) -> String? {
        if c.direction == "download" {
            if unlink(c.partialPath) != 0 && errno != ENOENT {
                return "cannot remove the partial file \(c.partialPath.shown): \(String(cString: strerror(errno))); the transfer stays paused"
            }
        } else {
            do {
                let connection = try SFTPConnection(transport: transport, destination: c.host, scene: scene)
                defer { connection.close() }
                try connection.run { fs, _ throws(SFTPError) in
                    if try fs.statIfExists(c.partialPath, follow: false) != nil { try fs.remove(c.partialPath) }
                }
            } catch {
                return "\(error.message)\ntermhost sftp: the remote partial file \(c.host):\(c.partialPath.shown) may remain; the transfer stays paused"
            }
        }
        checkpoints.remove(key)
        return nil
    }
}
