import CLibSSH2

/// OpenSSH's extensions that libssh2 does not offer: posix-rename@openssh.com, a rename that
/// replaces the target atomically (rename(2) on the server), where SFTP v3's rename refuses an
/// existing target; and limits@openssh.com, the largest requests the server accepts
/// (WriteRequests). They run on a second "sftp" subsystem channel of the same session that
/// termhost speaks itself (SFTPPipe), opened on first use, so libssh2's own SFTP channel and
/// its request IDs are never touched; small files are pipelined on it too (PipelinedUploads).
/// Runs on the session's executor (blocking mode), like RemoteFS.
final class OpenSSHExtensions {
    private(set) var pipe: SFTPPipe?
    var extensions: [String: String] { pipe?.extensions ?? [:] }
    /// The pipe's channel, if open (to close it with the others: ChannelClosing).
    var channel: OpaquePointer? { pipe?.channel }
    /// limits@openssh.com's answer once asked (.some(nil): not offered, not understood, or the
    /// asking failed).
    private var limitsAnswer: SFTPWire.Limits??
    /// The data bytes per write request this connection's SFTP session sends: libssh2's own
    /// until WriteRequests sets more (the setting is the session's, so it stays for later files).
    var writeRequestSize = WriteRequests.standard

    /// Frees the channel; on the executor, before the session is closed.
    func release() {
        pipe?.free()
        pipe = nil
    }

    /// Whether the server offers posix-rename; opens the channel on first use.
    func supportsPosixRename(_ fs: RemoteFS) throws(SFTPError) -> Bool {
        try start(fs).extensions["posix-rename@openssh.com"] != nil
    }

    /// rename(2) on the server: from replaces to atomically.
    func posixRename(_ fs: RemoteFS, from: String, to: String) throws(SFTPError) {
        let reply = try start(fs).call(fs, SFTPPacket.extended, about: from) {
            $0.appendString("posix-rename@openssh.com")
            $0.appendString(from)
            $0.appendString(to)
        }
        // SSH_FXP_STATUS: id, code, message, language.
        guard case .status(_, let code) = SFTPReply.parse(reply) else {
            throw SFTPError(.failed, "sftp: \(fs.host): unexpected reply to posix-rename")
        }
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
            // A channel opened here asks at once, behind its hello: one round trip less than
            // waiting for the server's extensions first. A server without the extension
            // answers the request with "unsupported".
            let pipe: SFTPPipe
            if let open = self.pipe { pipe = open } else { pipe = try SFTPPipe(opening: fs) }
            self.pipe = pipe
            guard pipe.greetingPending || pipe.extensions["limits@openssh.com"] != nil else { return nil }
            var id: UInt32 = 0
            let reply = try pipe.call(fs, SFTPPacket.extended, about: "") { body in
                id = body.uint32(at: 1)
                body.appendString("limits@openssh.com")
            }
            guard pipe.extensions["limits@openssh.com"] != nil else { return nil }
            let answer = SFTPWire.limits(ofReply: reply, id: id)
            limitsAnswer = .some(answer)
            return answer
        } catch {
            release()
            throw error
        }
    }

    /// The channel, opened on first use. One that did not complete the handshake is dropped,
    /// so a later call starts over instead of talking to a half-open one.
    @discardableResult
    func start(_ fs: RemoteFS) throws(SFTPError) -> SFTPPipe {
        if let pipe { return pipe }
        let opened = try SFTPPipe(fs)
        pipe = opened
        return opened
    }
}
