import CLibSSH2
import LibSSH2
import Glibc

/// The half-sent packet rule (HalfSentPacket) as the pass loop keeps it. A pass must not
/// block, so a call that leaves a packet half sent is remembered (`pending`) and the pass
/// stops sending; the next pass retries that call first, and a caller about to use the
/// session (exec, opens, close) finishes it through `flushPending`.
extension ChannelBridges {
    /// A libssh2 call that returned EAGAIN with its packet half sent: the one call to retry,
    /// with the same arguments, before anything else is sent.
    enum Pending {
        case read(Bridge), stderr(Bridge), write(Bridge), eof(Bridge), free(Bridge), probe(OpaquePointer), open
    }

    /// After a call returned EAGAIN: true (and remembered) when it left a packet half sent. [executor]
    func halfSent(_ call: Pending) -> Bool {
        ExecutorCheck.onExecutor(executor)
        guard HalfSentPacket.isLeft(in: connection.session) else { return false }
        pending = call
        return true
    }

    /// Retries the pending call once; true when it finished (or failed). [executor, non-blocking]
    func retryPending() -> Bool {
        ExecutorCheck.onExecutor(executor)
        guard let call = pending else { return true }
        pending = nil
        var rc: Int
        switch call {
        case .read(let b):
            // With data still waiting for the caller, a zero-length read only finishes the
            // window adjust that was half sent.
            let room = b.inStart == b.inEnd ? Bridge.capacity : 0
            rc = libssh2_channel_read_ex(b.channel, 0, b.toLocal.assumingMemoryBound(to: CChar.self), room)
            if rc > 0 { b.inStart = 0; b.inEnd = rc }
        case .stderr(let b):
            rc = libssh2_channel_read_ex(b.channel, 1, scratch, Bridge.capacity)   // as service's drain
        case .write(let b):
            rc = libssh2_channel_write_ex(b.channel, 0, (b.toChannel + b.outStart).assumingMemoryBound(to: CChar.self), b.outEnd - b.outStart)
            if rc > 0 { b.outStart += rc }
        case .eof(let b):
            rc = Int(libssh2_channel_send_eof(b.channel))
            if !LibSSH2.wouldBlock(rc) { b.eofSent = true }
        case .free(let b):
            free(b)
            return pending == nil
        case .probe(let sentinel):
            rc = Int(ChannelBridges.sendProbe(sentinel))
            if !LibSSH2.wouldBlock(rc) { probing = false }
        case .open:
            _ = advanceOpen()
            return pending == nil
        }
        if LibSSH2.wouldBlock(rc) { return !halfSent(call) }
        if rc < 0 && rc != Int(LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED) {
            noteFatal(rc)
            switch call {
            case .read(let b), .stderr(let b), .write(let b), .eof(let b): b.closing = true
            default: break
            }
        }
        return true
    }

    /// An open libssh2 has begun and not finished: no other channel may be opened meanwhile
    /// (libssh2 keeps one open's state per session). [executor]
    var openInProgress: Bool { opens.first?.started == true }

    /// The refusal of work that would open a channel while `openInProgress`, or nil. [executor]
    var openBusy: String? {
        guard openInProgress else { return nil }
        return "ssh: \(connection.shownAddress) has not answered a channel open yet (a forward's target slow to connect); "
            + "another channel cannot be opened on this connection until it does: try again"
    }

    /// Finishes a half-sent packet before other work uses the session (exec, opens, close);
    /// bounded (HalfSentPacket.bound): after that the next call reports the failure itself.
    /// `opens`: the work may open a channel itself, so an open libssh2 has begun (it keeps
    /// session-wide state, one at a time) is finished first; one the server does not answer
    /// within the bound fails. Opens still queued are left to the pass loop. [executor]
    func flushPending(opens drainOpens: Bool = true) {
        ExecutorCheck.onExecutor(executor)
        let begun = drainOpens && opens.first?.started == true
        guard pending != nil || begun, lost == nil else { pending = nil; return }
        libssh2_session_set_blocking(connection.session, 0)
        defer { libssh2_session_set_blocking(connection.session, 1) }
        let deadline = time(nil) + HalfSentPacket.bound
        if !retryPending() { _ = HalfSentPacket.finish(socket: connection.socket, by: deadline) { retryPending() } }
        pending = nil
        // Looked at again after the retry, which may have finished the begun open: one only
        // queued is left to the pass loop.
        if begun, let first = opens.first, first.started {
            while opens.first === first && lost == nil && time(nil) < deadline {
                if advanceOpen() { break }
                let outbound = HalfSentPacket.isLeft(in: connection.session)
                var p = pollfd(fd: connection.socket, events: Int16(POLLIN | (outbound ? POLLOUT : 0)), revents: 0)
                _ = poll(&p, 1, 100)
                _ = retryPending()
            }
            // Still begun (a server slow to reach the target): it stays, and goes on in the pass
            // loop; libssh2 cannot drop it midway, so the caller's work must not open a channel
            // now (`openInProgress`).
        }
        if let fatal { markLost(fatal) }
        bridges.removeAll { $0.freed }
    }
}
