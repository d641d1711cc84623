import CLibSSH2
import LibSSH2
import CTermhost
import Glibc
import TermhostSDK

/// Liveness (transport.h `watch`): a watched connection gets a pass loop even when it has no
/// bridges or listeners, with a sentinel session channel (no process started) whose reads make
/// libssh2 read the transport: keepalive replies are consumed, a server disconnect or a socket
/// error surfaces as an error code, and `checkAlive` counts silent keepalive intervals. The
/// first fatal error marks the connection lost, tells every watcher once and ends the bridges.
extension ChannelBridges {
    struct Watcher {
        let onLost: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void
        let user: UnsafeMutableRawPointer?
        /// The handle that watches: its close ends the watch.
        let owner: UInt64
    }

    /// Adds a watcher, opening the sentinel channel on first use. [executor, blocking mode]
    func watch(_ w: Watcher) throws(SSHError) {
        ExecutorCheck.onExecutor(executor)
        if let lost { throw SSHError(lost) }
        if sentinel == nil {
            // From here on probeAlive() is this connection's keepalive. libssh2's own must stop
            // first: it is sent from inside any blocking wait (this open included), and in 1.10
            // its reply (REQUEST_FAILURE) stays queued and is later taken as the answer to the
            // next tcpip-forward, failing -R listens. exec() on a watched connection therefore
            // no longer counts silence itself (checkAlive sees interval 0).
            probeInterval = connection.keepaliveInterval
            probeCountMax = connection.keepaliveCountMax
            libssh2_keepalive_config(connection.session, 0, 0)
            connection.keepaliveInterval = 0
            libssh2_session_set_blocking(connection.session, 1)
            let start = ReceiveWindow.now()
            guard let channel = libssh2_channel_open_ex(connection.session, "session", 7, 64 * 1024, 32 * 1024, nil, 0) else {
                throw SSHError("ssh: \(connection.shownAddress) cannot open a channel to watch the connection: \(connection.lastError())")
            }
            sentinel = channel
            connection.noteRoundTrip(since: start)   // a request and its answer: the round trip
        }
        watchers.append(w)
        schedule()
    }

    /// Dead-peer detection for a watched connection: every keepaliveInterval seconds a
    /// request on the sentinel channel (sendProbe), wanting a reply (the server
    /// answers failure, which is all we need: bytes came back). A channel request, not a global
    /// one, so its reply can never be mistaken for a tcpip-forward answer (see watch()). Declares the connection lost
    /// after interval x count seconds without a byte from the server, as ServerAliveCountMax
    /// does. False when the connection was marked lost. [executor, non-blocking]
    func probeAlive(_ sentinel: OpaquePointer) -> Bool {
        ExecutorCheck.onExecutor(executor)
        let interval = probeInterval
        guard interval > 0 else { return true }
        let now = time(nil)
        if !probing && Int(now - lastProbe) >= interval {
            probing = true
            lastProbe = now
        }
        if probing {
            let rc = ChannelBridges.sendProbe(sentinel)
            if !LibSSH2.wouldBlock(rc) { probing = false } else if halfSent(.probe(sentinel)) { return true }
            if ChannelBridges.isFatal(Int(rc)) {
                markLost(lostMessage(Int32(rc)))
                return false
            }
        }
        let silent = ConnectionSettings.millisecondsSince(connection.lastReceive)
        if ConnectionSettings.silentTooLong(silent, interval: interval, count: probeCountMax) {
            markLost("Timeout, server \(connection.shownAddress) not responding.")
            return false
        }
        return true
    }

    /// One probe: a channel request that wants a reply, on the sentinel channel. Not
    /// "keepalive@openssh.com" through libssh2_channel_process_startup, as OpenSSH's client
    /// sends it: libssh2 (1.10 and 1.11) runs process_startup once per channel and answers every
    /// later call with "Channel can not be reused" without sending anything, so only the first
    /// probe went out and a healthy idle connection was declared lost after interval x count.
    /// An "env" request can be repeated; servers refuse it (or accept a harmless variable) and
    /// either answer is bytes from the server. [executor, non-blocking]
    static func sendProbe(_ sentinel: OpaquePointer) -> Int32 {
        libssh2_channel_setenv_ex(sentinel, "TERMHOST_KEEPALIVE", 18, "1", 1)
    }

    /// What an operator should read for a fatal code: the likely cause first, libssh2's words
    /// after. [executor]
    func lostMessage(_ rc: Int32) -> String {
        ExecutorCheck.onExecutor(executor)
        let cause = switch rc {
        case LIBSSH2_ERROR_SOCKET_RECV, LIBSSH2_ERROR_SOCKET_DISCONNECT: "the server closed the connection"
        case LIBSSH2_ERROR_SOCKET_SEND: "cannot send to the server"
        case LIBSSH2_ERROR_TIMEOUT, LIBSSH2_ERROR_SOCKET_TIMEOUT: "the server stopped answering"
        default: "protocol failure"
        }
        return "ssh: connection to \(connection.shownAddress) port \(connection.destination.port) lost: \(cause) (\(connection.lastError()))"
    }

    /// libssh2 codes that mean the session, not one channel, is finished.
    static func isFatal(_ rc: Int) -> Bool {
        [LIBSSH2_ERROR_SOCKET_SEND, LIBSSH2_ERROR_SOCKET_DISCONNECT, LIBSSH2_ERROR_SOCKET_RECV, LIBSSH2_ERROR_SOCKET_TIMEOUT,
         LIBSSH2_ERROR_TIMEOUT, LIBSSH2_ERROR_KEX_FAILURE, LIBSSH2_ERROR_DECRYPT].contains(Int32(rc))
    }

    /// Whether one more handle may join this connection (TransportLink): not lost, no goodbye
    /// from the server, a socket that neither hung up nor failed; and, when nothing watches it
    /// (so nothing reads its transport between calls, and a server gone quiet would go
    /// unseen), a session channel opens and closes on it, as a kept connection's proof.
    /// [executor, blocking mode; no channel open in progress]
    func provesAlive() -> Bool {
        ExecutorCheck.onExecutor(executor)
        guard lost == nil, connection.sessionContext.disconnect == nil else { return false }
        var p = pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, 0)
        guard p.revents & Int16(POLLERR | POLLHUP | POLLNVAL) == 0 else { return false }
        guard sentinel == nil else { return true }
        libssh2_session_set_blocking(connection.session, 1)
        guard let probe = connection.probeChannel() else { return false }
        libssh2_channel_free(probe)
        return true
    }

    /// Marks the connection lost: ends bridges and listeners (their channels are freed with the
    /// session) and tells each watcher once. [executor]
    func markLost(_ reason: String) {
        ExecutorCheck.onExecutor(executor)
        guard lost == nil else { return }
        lost = reason
        pending = nil
        for o in opens { o.fail(SSHError(reason)) }
        opens = []
        // A bridge already freed closed its socket (its number may be someone else's now).
        for b in bridges where !b.freed { ended(b, Int32(TERMHOST_ERR_IO), reason) }
        bridges = []
        listeners = []
        let told = watchers
        watchers = []
        for w in told { reason.withCString { w.onLost(w.user, $0) } }
    }

    /// Remembers the first fatal code a bridge ran into this pass; the pass then marks the
    /// connection lost. [executor]
    func noteFatal(_ rc: Int) {
        ExecutorCheck.onExecutor(executor)
        if fatal == nil && ChannelBridges.isFatal(rc) {
            fatal = lostMessage(Int32(rc))
        }
    }
}
