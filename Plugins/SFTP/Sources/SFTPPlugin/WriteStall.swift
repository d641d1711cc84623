import CLibSSH2
import Foundation

/// What a writer does when libssh2 accepted nothing. In blocking mode, libssh2's
/// `libssh2_sftp_write` and `libssh2_channel_write_ex` return 0, not an error and not after a
/// wait, when the server's channel window filled during the call: the bytes stay queued in
/// libssh2 and nothing is acknowledged yet. Dropbear's window (24,576 bytes, `dropbear -W`) is
/// smaller than one SFTP write request (30,000 bytes, or 258,048 with Termhost's libssh2:
/// WriteRequests), so every upload to a stock Dropbear meets it after its first request;
/// OpenSSH's window (2 MiB) rarely fills before an acknowledgement comes back. Termhost's libssh2
/// also returns 0 when the socket fills after part of a large request went out.
///
/// A 0 therefore means "wait for the socket, then pass the same bytes again" (libssh2's
/// contract for a write it did not finish). The wait is bounded by the session's timeout
/// (`libssh2_session_get_timeout`: the SSH plugin's connectTimeout), the bound every blocking
/// libssh2 call already has, so a server that stops reading is still reported as lost.
/// Runs on the session's executor, like RemoteFS.
struct WriteStall {
    private var since: ContinuousClock.Instant?

    /// The last call moved bytes: the next 0 starts a new wait.
    mutating func progressed() { since = nil }

    /// After a call that moved nothing: waits until the server sends something (a window
    /// adjust or an acknowledgement), at most a second, so the caller's pause and cancel checks
    /// run between waits. Throws once nothing has moved for the session's timeout.
    mutating func wait(_ fs: RemoteFS, _ path: String, what: String) throws(SFTPError) {
        let start = since ?? .now
        since = start
        let timeout = libssh2_session_get_timeout(fs.session)
        if timeout > 0, ContinuousClock.now - start >= .milliseconds(timeout) {
            throw SFTPError(.connectionLost, "sftp: \(what) \(fs.host):\(path.shown): connection to \(fs.host) lost: the server took no data for \(timeout / 1000) s (connectTimeout)")
        }
        fs.waitForSocket(milliseconds: 1000)
    }
}
