import CLibSSH2
import Glibc

/// Closes several channels of a session in one round trip. `libssh2_channel_free` sends a
/// channel's close and then waits for the server's answer, one round trip per channel: a
/// connection that carried an upload over eight channels spent 150 ms at 50 ms closing them
/// one after another before the command could end. Here every close goes out first, without
/// blocking, and then the answers are read together; the frees that follow have nothing left
/// to wait for. Only for channels termhost opened itself (SFTPPipe): closing the channel of
/// libssh2's own SFTP session under it made the `libssh2_sftp_shutdown` that followed crash
/// (SIGSEGV inside libssh2 1.11.1, seen in one upload of three), so that one is shut down as
/// libssh2 expects, after the others. Runs on the session's executor, in blocking mode, like
/// RemoteFS.
enum ChannelClosing {
    /// Closes `channels` (not freeing them), waiting at most the session's timeout in all. A
    /// close libssh2 refuses is left to the free that follows, which tries again.
    static func close(_ channels: [OpaquePointer], session: OpaquePointer, socket: Int32) {
        guard channels.count > 1 else { return }
        libssh2_session_set_blocking(session, 0)
        defer { libssh2_session_set_blocking(session, 1) }
        let timeout = max(Int(libssh2_session_get_timeout(session)), 1000)
        let deadline = ContinuousClock.now + .milliseconds(timeout)
        var open = channels
        while !open.isEmpty, ContinuousClock.now < deadline {
            open = open.filter { libssh2_channel_close($0) == LIBSSH2_ERROR_EAGAIN }
            guard !open.isEmpty else { return }
            let outbound = libssh2_session_block_directions(session) & LIBSSH2_SESSION_BLOCK_OUTBOUND != 0
            var p = pollfd(fd: socket, events: Int16(outbound ? POLLOUT : POLLIN), revents: 0)
            _ = poll(&p, 1, 100)
        }
    }
}
