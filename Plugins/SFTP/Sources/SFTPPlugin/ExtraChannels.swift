import CLibSSH2

/// SFTP channels a connection opened besides libssh2's first one, for uploads that spread over
/// several (UploadLanes). Each is an SFTP session of its own on the same SSH session (its own
/// channel, window and request IDs). They are kept for the connection's later files: opening
/// one costs three round trips (channel, subsystem, version). Runs on the session's executor,
/// like RemoteFS.
final class ExtraChannels {
    /// Opened and not in use by an upload now.
    private var idle: [OpaquePointer] = []
    private var all: [OpaquePointer] = []
    /// The server refused one (OpenSSH's MaxSessions, 10 by default, counts every channel of a
    /// connection): no more are asked for on this connection.
    private(set) var refused = false

    /// A kept channel, if one is idle.
    func take() -> OpaquePointer? { idle.popLast() }

    /// A channel the caller opened (libssh2_sftp_init), kept from now on.
    func opened(_ sftp: OpaquePointer) { all.append(sftp) }

    /// The server would not open another: the caller goes on with the channels it has.
    func refuse() { refused = true }

    /// An upload is done with a channel: a later one may take it.
    func giveBack(_ sftp: OpaquePointer) { idle.append(sftp) }

    /// Shuts a channel down now (one left with part of a request sent: nothing more may go on
    /// it); the server ends its sftp-server.
    func discard(_ sftp: OpaquePointer) {
        all.removeAll { $0 == sftp }
        idle.removeAll { $0 == sftp }
        libssh2_sftp_shutdown(sftp)
    }

    /// Shuts every channel down; on the executor, before the session is closed.
    func release() {
        for sftp in all { libssh2_sftp_shutdown(sftp) }
        all = []
        idle = []
    }
}
