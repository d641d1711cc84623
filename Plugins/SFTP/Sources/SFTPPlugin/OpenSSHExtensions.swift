import CLibSSH2

/// OpenSSH's extensions that libssh2 does not offer: posix-rename@openssh.com, a rename that
/// replaces the target atomically (rename(2) on the server), where SFTP v3's rename refuses an
/// existing target; and limits@openssh.com, the largest requests the server accepts
/// (WriteRequests). They run on a second "sftp" subsystem channel of the same session, opened
/// on first use, so libssh2's own SFTP channel and its request IDs are never touched.
/// Runs on the session's executor (blocking mode), like RemoteFS.
final class OpenSSHExtensions {
    private var channel: OpaquePointer?
    private(set) var extensions: [String: String] = [:]
    private var nextID: UInt32 = 1
    /// limits@openssh.com's answer once asked (.some(nil): not offered, not understood, or the
    /// asking failed).
    private var limitsAnswer: SFTPWire.Limits??
    /// The data bytes per write request this connection's SFTP session sends: libssh2's own
    /// until WriteRequests sets more (the setting is the session's, so it stays for later files).
    var writeRequestSize = WriteRequests.standard

    /// Frees the channel; on the executor, before the session is closed.
    func release() {
        if let channel { libssh2_channel_free(channel) }
        channel = nil
    }

    /// Whether the server offers posix-rename; opens the channel on first use.
    func supportsPosixRename(_ fs: RemoteFS) throws(SFTPError) -> Bool {
        try start(fs)
        return extensions["posix-rename@openssh.com"] != nil
    }

    /// rename(2) on the server: from replaces to atomically.
    func posixRename(_ fs: RemoteFS, from: String, to: String) throws(SFTPError) {
        try start(fs)
        let id = nextID
        nextID &+= 1          // request ids wrap, as the protocol's do
        var body: [UInt8] = [200]          // SSH_FXP_EXTENDED
        body.appendUInt32(id)
        body.appendString("posix-rename@openssh.com")
        body.appendString(from)
        body.appendString(to)
        try send(fs, body, about: from)
        let reply = try receive(fs, about: from)
        // SSH_FXP_STATUS: id, code, message, language.
        guard reply.first == 101, reply.count >= 9 else { throw SFTPError(.failed, "sftp: \(fs.host): unexpected reply to posix-rename") }
        let code = reply.uint32(at: 5)
        guard code == 0 else {
            throw SFTPError(.remote, "sftp: cannot rename \(fs.host):\(from.shown) to \(to.shown): \(SFTPError.reason(UInt(code)))", status: UInt(code))
        }
    }

    /// The server's limits@openssh.com, asked once per connection; nil when the server does not
    /// offer it or answers with anything else. A failure (the server refused the second channel,
    /// say) is remembered as nil too, so the next file does not ask again, and drops the
    /// channel, so that posix-rename starts over on a new one rather than reading the rest of a
    /// broken answer; the error is passed on for the caller's log.
    func limits(_ fs: RemoteFS) throws(SFTPError) -> SFTPWire.Limits? {
        if let known = limitsAnswer { return known }
        limitsAnswer = .some(nil)
        do throws(SFTPError) {
            try start(fs)
            guard extensions["limits@openssh.com"] != nil else { return nil }
            let id = nextID
            nextID &+= 1
            var body: [UInt8] = [200]          // SSH_FXP_EXTENDED
            body.appendUInt32(id)
            body.appendString("limits@openssh.com")
            try send(fs, body, about: "")
            let answer = SFTPWire.limits(ofReply: try receive(fs, about: ""), id: id)
            limitsAnswer = .some(answer)
            return answer
        } catch {
            release()
            throw error
        }
    }

    private func start(_ fs: RemoteFS) throws(SFTPError) {
        guard channel == nil else { return }
        guard let c = libssh2_channel_open_ex(fs.session, "session", 7, 256 * 1024, 32768, nil, 0) else {
            throw fs.error("", "cannot open an SFTP channel on")
        }
        guard libssh2_channel_process_startup(c, "subsystem", 9, "sftp", 4) == 0 else {
            libssh2_channel_free(c)
            throw fs.error("", "cannot start SFTP on")
        }
        channel = c
        // A channel that did not complete the handshake is dropped, so a later call starts over
        // instead of talking to a half-open one.
        do throws(SFTPError) {
            var hello: [UInt8] = [1]           // SSH_FXP_INIT, version 3
            hello.appendUInt32(3)
            try send(fs, hello, about: "")
            let version = try receive(fs, about: "")
            guard version.first == 2 else { throw SFTPError(.failed, "sftp: \(fs.host): the server did not answer SFTP INIT") }
            parseExtensions(version)
        } catch {
            release()
            throw error
        }
    }

    /// SSH_FXP_VERSION: version, then (name, data) string pairs.
    private func parseExtensions(_ version: [UInt8]) { extensions = SFTPWire.extensions(ofVersion: version) }

    private func send(_ fs: RemoteFS, _ body: [UInt8], about path: String) throws(SFTPError) {
        var packet: [UInt8] = []
        packet.appendUInt32(UInt32(body.count))
        packet += body
        var sent = 0
        var stall = WriteStall()
        while sent < packet.count {
            let n = packet[sent...].withUnsafeBytes { libssh2_channel_write_ex(channel, 0, $0.baseAddress, $0.count) }
            if n == 0 {
                // The server's channel window is full (WriteStall).
                try stall.wait(fs, path, what: "cannot send a request about")
                continue
            }
            guard n > 0 else { throw fs.error(path) }
            stall.progressed()
            sent += n
        }
    }

    private func receive(_ fs: RemoteFS, about path: String) throws(SFTPError) -> [UInt8] {
        let header = try read(fs, 4, about: path)
        let length = Int(header.uint32(at: 0))
        guard length > 0, length < 256 * 1024 else { throw SFTPError(.failed, "sftp: \(fs.host): malformed SFTP packet (length \(length))") }
        return try read(fs, length, about: path)
    }

    private func read(_ fs: RemoteFS, _ count: Int, about path: String) throws(SFTPError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = out[got...].withUnsafeMutableBytes { libssh2_channel_read_ex(channel, 0, $0.baseAddress, $0.count) }
            guard n > 0 else { throw n == 0 ? SFTPError(.connectionLost, "sftp: \(fs.host): the SFTP channel closed") : fs.error(path) }
            got += n
        }
        return out
    }
}
