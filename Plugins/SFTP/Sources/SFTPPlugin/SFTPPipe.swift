import CLibSSH2

/// An SFTP v3 session termhost speaks itself, on a channel of its own. libssh2's SFTP API
/// waits for each reply before the next request of the same kind, so it cannot keep the
/// requests of many files in flight (PipelinedUploads) and has no call for OpenSSH's extended
/// requests (OpenSSHExtensions). Requests are framed into an outgoing buffer and written as the
/// channel takes them; replies are cut from what the channel gives (SFTPFrames) and matched to
/// requests by id. `call` needs blocking mode, `pump` the other.
/// Runs on the session's executor, like RemoteFS.
final class SFTPPipe {
    let channel: OpaquePointer
    /// SSH_FXP_VERSION's extension pairs.
    private(set) var extensions: [String: String] = [:]
    private var outgoing: [UInt8] = []
    private var sent = 0
    private var frames = SFTPFrames()
    private var nextID: UInt32 = 1
    /// Whether the server's SSH_FXP_VERSION has come.
    private var greeted = false
    var greetingPending: Bool { !greeted }
    /// Whether this pipe's last read left a packet half sent (`pump`).
    private var readLeftPacket = false

    /// Opens the channel, starts the sftp subsystem and says hello (three round trips), in
    /// blocking mode.
    convenience init(_ fs: RemoteFS) throws(SFTPError) {
        try self.init(opening: fs)
        do throws(SFTPError) {
            _ = try wait(fs, until: { self.greeted }) { _ in false }
        } catch {
            free()
            throw error
        }
    }

    /// Opens the channel and starts the sftp subsystem (two round trips), in blocking mode; the
    /// hello is queued, and the first `call` reads the server's answer to it with its own
    /// reply (`extensions` is empty until then).
    convenience init(opening fs: RemoteFS) throws(SFTPError) {
        guard let c = SFTPPipe.openChannel(fs.session) else { throw SFTPPipe.openFailed(fs) }
        guard SFTPPipe.startSubsystem(c) == 0 else {
            let error = SFTPPipe.startFailed(fs)
            libssh2_channel_free(c)
            throw error
        }
        self.init(started: c)
    }

    /// On a channel whose sftp subsystem has started: queues the hello (SSH_FXP_INIT, version
    /// 3). Requests may follow it at once: a server handles a channel's packets in order, so
    /// the hello is handled first (UploadLanes' further channels save a round trip so). The
    /// server's SSH_FXP_VERSION is read before any reply (`next`).
    init(started channel: OpaquePointer) {
        self.channel = channel
        var hello: [UInt8] = [1]           // SSH_FXP_INIT, version 3 (no id)
        hello.appendUInt32(3)
        frame(hello)
    }

    /// The receive window and packet size of a pipe's channel: replies are small.
    static let window: UInt32 = 256 * 1024, packet: UInt32 = 32768

    /// libssh2_channel_open_ex for a pipe's channel; without blocking, the same call again
    /// after EAGAIN.
    static func openChannel(_ session: OpaquePointer) -> OpaquePointer? {
        libssh2_channel_open_ex(session, "session", 7, window, packet, nil, 0)
    }

    /// Asks for the sftp subsystem on `channel`: libssh2_channel_process_startup's result.
    static func startSubsystem(_ channel: OpaquePointer) -> Int32 {
        libssh2_channel_process_startup(channel, "subsystem", 9, "sftp", 4)
    }

    /// libssh2_channel_open_ex's failure: a refusal (OpenSSH's MaxSessions) leaves the
    /// connection up; anything else did not.
    static func openFailed(_ fs: RemoteFS) -> SFTPError {
        if libssh2_session_last_errno(fs.session) == LIBSSH2_ERROR_CHANNEL_FAILURE {
            return SFTPError(.refused, "sftp: \(fs.host): the server refused another SFTP channel (\(fs.lastErrorReason))")
        }
        return SFTPError(.connectionLost, "sftp: cannot open an SFTP channel on \(fs.host): connection lost: \(fs.lastErrorReason)")
    }

    /// libssh2_channel_process_startup's failure, as openFailed.
    static func startFailed(_ fs: RemoteFS) -> SFTPError {
        if libssh2_session_last_errno(fs.session) == LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED {
            return SFTPError(.refused, "sftp: \(fs.host): the server refused SFTP on another channel (\(fs.lastErrorReason))")
        }
        return SFTPError(.connectionLost, "sftp: cannot start SFTP on \(fs.host): connection lost: \(fs.lastErrorReason)")
    }

    /// Frees the channel; on the executor, before the session is closed.
    func free() { libssh2_channel_free(channel) }

    /// Whether requests are written but not all sent yet.
    var sending: Bool { sent < outgoing.count }

    /// Queues a request: type, a fresh id, then `fields`. Returns the id.
    @discardableResult
    func request(_ type: UInt8, _ fields: (inout [UInt8]) -> Void) -> UInt32 {
        let id = nextID
        nextID &+= 1          // ids wrap, as the protocol's do
        frame(SFTPPacket.request(type, id, fields))
        return id
    }

    /// One request and its reply, in blocking mode: the reply's body.
    func call(_ fs: RemoteFS, _ type: UInt8, about path: String, _ fields: (inout [UInt8]) -> Void) throws(SFTPError) -> [UInt8] {
        let id = request(type, fields)
        // Without `until`, wait returns only with a reply that matches.
        return try wait(fs, about: path) { $0.count >= 5 && $0.uint32(at: 1) == id }!
    }

    /// Without blocking: writes what the channel takes, then reads what it has. Returns the
    /// replies complete so far and whether any byte moved either way.
    func pump(_ fs: RemoteFS) throws(SFTPError) -> (replies: [[UInt8]], moved: Bool) {
        var moved = false
        // A read that left a packet half sent (the window adjust libssh2 sends from inside
        // channel_read) is finished only by a read on this channel: any write first would
        // get EAGAIN for ever.
        while sending, !readLeftPacket {
            let n = outgoing[sent...].withUnsafeBytes { libssh2_channel_write_ex(channel, 0, $0.baseAddress, $0.count) }
            if n == 0 || n == Int(LIBSSH2_ERROR_EAGAIN) { break }
            guard n > 0 else { throw SFTPError(.connectionLost, "sftp: cannot send SFTP requests to \(fs.host): connection lost: \(fs.lastErrorReason)") }
            sent += n
            moved = true
        }
        compact()
        var replies: [[UInt8]] = []
        // Nothing is read while a write left a packet half sent (the socket full): a key
        // exchange the server started could then never send its own packet. The socket's room
        // comes first.
        if fs.packetHalfSent, !readLeftPacket { return (replies, moved) }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { libssh2_channel_read_ex(channel, 0, $0.baseAddress, $0.count) }
            readLeftPacket = fs.packetHalfSent
            if n > 0 {
                moved = true
                chunk.withUnsafeBytes { frames.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                if readLeftPacket { break }
                continue
            }
            if n == Int(LIBSSH2_ERROR_EAGAIN) { break }
            if n == 0, libssh2_channel_eof(channel) == 0 { break }
            throw n == 0 ? SFTPError(.connectionLost, "sftp: \(fs.host): the SFTP channel closed") : SFTPError(.connectionLost, "sftp: cannot read SFTP replies from \(fs.host): connection lost: \(fs.lastErrorReason)")
        }
        while let body = try next(fs) { replies.append(body) }
        return (replies, moved)
    }

    private func frame(_ body: [UInt8]) {
        outgoing.appendUInt32(UInt32(body.count))
        outgoing += body
    }

    /// Drops sent bytes once they are half the buffer.
    private func compact() {
        if sent == outgoing.count {
            outgoing.removeAll(keepingCapacity: true)
            sent = 0
        } else if sent > outgoing.count / 2 {
            outgoing.removeFirst(sent)
            sent = 0
        }
    }

    /// The next reply; the server's SSH_FXP_VERSION, which comes before any, is taken first.
    private func next(_ fs: RemoteFS) throws(SFTPError) -> [UInt8]? {
        if !greeted {
            guard let version = try packet(fs) else { return nil }
            guard version.count >= 5, version[0] == 2 else { throw SFTPError(.failed, "sftp: \(fs.host): the server did not answer SFTP's hello") }
            // A server that speaks an older version would read version 3's requests wrongly.
            let number = version.uint32(at: 1)
            guard number >= 3 else { throw SFTPError(.failed, "sftp: \(fs.host): the server speaks SFTP version \(number); termhost speaks 3") }
            extensions = SFTPWire.extensions(ofVersion: version)
            greeted = true
        }
        return try packet(fs)
    }

    private func packet(_ fs: RemoteFS) throws(SFTPError) -> [UInt8]? {
        do { return try frames.next() } catch {
            throw SFTPError(.failed, "sftp: \(fs.host): malformed SFTP packet (length \(error.length))")
        }
    }

    /// Blocking mode: sends what is queued, then reads until a reply `matches` (others are
    /// dropped: in blocking use there is one request in flight), or returns nil once `done`.
    private func wait(_ fs: RemoteFS, about path: String = "", until done: () -> Bool = { false },
                      _ matches: ([UInt8]) -> Bool) throws(SFTPError) -> [UInt8]? {
        var stall = WriteStall()
        while sending {
            let n = outgoing[sent...].withUnsafeBytes { libssh2_channel_write_ex(channel, 0, $0.baseAddress, $0.count) }
            if n == 0 {
                // The server's channel window is full (WriteStall).
                try stall.wait(fs, path, what: "cannot send a request about")
                continue
            }
            guard n > 0 else { throw fs.error(path) }
            stall.progressed()
            sent += n
        }
        compact()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            while let body = try next(fs) { if matches(body) { return body } }
            if done() { return nil }
            let n = chunk.withUnsafeMutableBytes { libssh2_channel_read_ex(channel, 0, $0.baseAddress, $0.count) }
            guard n > 0 else { throw n == 0 ? SFTPError(.connectionLost, "sftp: \(fs.host): the SFTP channel closed") : fs.error(path) }
            chunk.withUnsafeBytes { frames.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
    }
}
