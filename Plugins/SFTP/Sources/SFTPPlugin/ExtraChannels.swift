/// SFTP channels a connection opened besides libssh2's first one and the extensions' one, for
/// uploads that spread over several (UploadLanes, PipeLane). Each is an SFTP session termhost
/// speaks itself on the same SSH session (its own channel, window and request IDs). They are
/// kept for the connection's later files: opening one costs two or three round trips
/// (channel, subsystem, version). Runs on the session's executor, like RemoteFS.
final class ExtraChannels {
    /// Opened and not in use by an upload now.
    private var idle: [SFTPPipe] = []
    private var all: [SFTPPipe] = []
    /// The server refused one (OpenSSH's MaxSessions, 10 by default, counts every channel of a
    /// connection): no more are asked for on this connection.
    private(set) var refused = false

    /// Every channel kept (to close them together: ChannelClosing).
    var opened: [OpaquePointer] { all.map(\.channel) }

    /// A kept channel, if one is idle.
    func take() -> SFTPPipe? { idle.popLast() }

    /// A channel the caller opened, kept from now on.
    func opened(_ pipe: SFTPPipe) { all.append(pipe) }

    /// The server would not open another: the caller goes on with the channels it has.
    func refuse() { refused = true }

    /// An upload is done with a channel: a later one may take it.
    func giveBack(_ pipe: SFTPPipe) { idle.append(pipe) }

    /// Shuts a channel down now, in blocking mode (one an upload stopped on: what it holds is
    /// dropped); the server ends its sftp-server.
    func discard(_ pipe: SFTPPipe) {
        all.removeAll { $0 === pipe }
        idle.removeAll { $0 === pipe }
        pipe.free()
    }

    /// Drops a channel unfreed (the session is unusable; it goes with the session).
    func forget(_ pipe: SFTPPipe) {
        all.removeAll { $0 === pipe }
        idle.removeAll { $0 === pipe }
    }

    /// Shuts every channel down; on the executor, before the session is closed.
    func release() {
        for pipe in all { pipe.free() }
        all = []
        idle = []
    }
}
