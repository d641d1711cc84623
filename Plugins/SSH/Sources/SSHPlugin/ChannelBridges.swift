import CLibSSH2
import Foundation
import Glibc

/// Channels of one connection bridged to local stream sockets, for the transport service's
/// direct-tcpip, shell and remote-forward calls. Everything here runs on the connection's
/// executor (its serial queue): a pass services every bridge and listener without blocking,
/// then, while any is alive, the next pass is queued, so exec() and with_session() calls
/// interleave between passes and the session never has two callers.
///
/// Flow control: each direction holds at most one 256 KiB buffer; the channel is not read
/// while the caller's socket has not taken the last chunk, so the SSH window closes and the
/// server stops sending (and the other way round).
final class ChannelBridges: @unchecked Sendable {
    final class Bridge {
        let channel: OpaquePointer
        let fd: Int32            // our end, non-blocking
        let callerFD: Int32      // the caller's end, for resize lookups
        let isShell: Bool
        static let capacity = 256 * 1024
        let toChannel = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
        let toLocal = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
        var outStart = 0, outEnd = 0      // toChannel pending
        var inStart = 0, inEnd = 0        // toLocal pending
        var localEOF = false, eofSent = false, channelEOF = false, shutWR = false, closing = false

        init(channel: OpaquePointer, fd: Int32, callerFD: Int32, isShell: Bool) {
            self.channel = channel
            self.fd = fd
            self.callerFD = callerFD
            self.isShell = isShell
        }

        deinit {
            toChannel.deallocate()
            toLocal.deallocate()
        }
    }

    struct Listener {
        let listener: OpaquePointer
        let port: Int32
        let onAccept: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, Int32) -> Void
        let user: UnsafeMutableRawPointer?
    }

    /// A caller of watch(): told once when the connection dies.
    struct Watcher {
        let onLost: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void
        let user: UnsafeMutableRawPointer?
    }

    let connection: SSHConnection
    let executor: DispatchQueue
    private(set) var bridges: [Bridge] = []
    private var watchers: [Watcher] = []
    private var lost = false
    private(set) var listeners: [Listener] = []
    private var scheduled = false

    init(connection: SSHConnection, executor: DispatchQueue) {
        self.connection = connection
        self.executor = executor
    }

    /// Wraps a started channel; returns the caller's end. [executor]
    func bridge(_ channel: OpaquePointer, isShell: Bool) throws(SSHError) -> Int32 {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            libssh2_channel_free(channel)
            throw SSHError("ssh: socketpair: \(String(cString: strerror(errno)))")
        }
        _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
        bridges.append(Bridge(channel: channel, fd: pair[0], callerFD: pair[1], isShell: isShell))
        schedule()
        return pair[1]
    }

    func addListener(_ l: Listener) { listeners.append(l); schedule() }

    /// Minimal loss detection: a bridge's channel failing with a socket error means the
    /// connection is gone. [executor]
    func addWatcher(_ w: Watcher) {
        if lost { w.onLost(w.user, "the connection was lost"); return }
        watchers.append(w)
    }

    private func connectionLost(_ rc: Int) {
        guard !lost, rc == Int(LIBSSH2_ERROR_SOCKET_RECV) || rc == Int(LIBSSH2_ERROR_SOCKET_SEND)
                || rc == Int(LIBSSH2_ERROR_SOCKET_DISCONNECT) || rc == Int(LIBSSH2_ERROR_SOCKET_TIMEOUT) else { return }
        lost = true
        let reason = "Connection to \(connection.destination.address) lost: \(connection.lastError())"
        let told = watchers
        watchers = []
        for w in told { w.onLost(w.user, reason) }
    }

    func removeListener(port: Int32) -> OpaquePointer? {
        guard let i = listeners.firstIndex(where: { $0.port == port }) else { return nil }
        return listeners.remove(at: i).listener
    }

    func shell(callerFD: Int32) -> OpaquePointer? { bridges.first { $0.isShell && $0.callerFD == callerFD }?.channel }

    /// Ends every bridge and listener (the connection is closing). [executor]
    func closeAll() {
        libssh2_session_set_blocking(connection.session, 1)
        libssh2_session_set_timeout(connection.session, 2000)
        for l in listeners { libssh2_channel_forward_cancel(l.listener) }
        listeners = []
        for b in bridges { libssh2_channel_free(b.channel); close(b.fd) }
        bridges = []
    }

    private func schedule() {
        guard !scheduled, !(bridges.isEmpty && listeners.isEmpty) else { return }
        scheduled = true
        executor.async { [self] in pass() }
    }

    /// One non-blocking round over everything, then a short wait when nothing moved. [executor]
    private func pass() {
        scheduled = false
        let session = connection.session
        libssh2_session_set_blocking(session, 0)
        defer { libssh2_session_set_blocking(session, 1) }
        var progressed = false
        for l in listeners {
            while let channel = libssh2_channel_forward_accept(l.listener) {
                if let callerFD = try? bridge(channel, isShell: false) {
                    // libssh2 1.10 does not report the originator of a forwarded connection.
                    l.onAccept(l.user, callerFD, "", 0)
                }
                progressed = true
            }
        }
        for b in bridges where service(b) { progressed = true }
        bridges.removeAll { b in
            guard b.closing else { return false }
            if libssh2_channel_free(b.channel) == LIBSSH2_ERROR_EAGAIN { return false }
            close(b.fd)
            return true
        }
        guard !(bridges.isEmpty && listeners.isEmpty) else { return }
        if !progressed {
            var fds = [pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0)]
            if libssh2_session_block_directions(session) & LIBSSH2_SESSION_BLOCK_OUTBOUND != 0 { fds[0].events |= Int16(POLLOUT) }
            for b in bridges {
                var events: Int16 = 0
                if b.outStart == b.outEnd && !b.localEOF { events |= Int16(POLLIN) }
                if b.inStart < b.inEnd { events |= Int16(POLLOUT) }
                if events != 0 { fds.append(pollfd(fd: b.fd, events: events, revents: 0)) }
            }
            _ = poll(&fds, nfds_t(fds.count), 50)
        }
        schedule()
    }

    /// Moves what can move for one bridge; true if any byte moved. [executor, non-blocking]
    private func service(_ b: Bridge) -> Bool {
        guard !b.closing else { return false }
        var moved = false
        // Channel -> caller, only when the caller took the last chunk.
        if b.inStart == b.inEnd && !b.channelEOF {
            let n = libssh2_channel_read_ex(b.channel, 0, b.toLocal.assumingMemoryBound(to: CChar.self), Bridge.capacity)
            if n > 0 { b.inStart = 0; b.inEnd = n; moved = true }
            else if n < 0 && n != Int(LIBSSH2_ERROR_EAGAIN) { connectionLost(n); b.closing = true; return true }
            // Nothing reads a bridged channel's stderr; drain it so the window stays open.
            var scratch = [CChar](repeating: 0, count: 4096)
            while libssh2_channel_read_ex(b.channel, 1, &scratch, scratch.count) > 0 {}
            if b.inStart == b.inEnd && libssh2_channel_eof(b.channel) != 0 { b.channelEOF = true }
        }
        if b.inStart < b.inEnd {
            // send(MSG_NOSIGNAL), not write(): a caller that closed its end must give EPIPE,
            // never a SIGPIPE that kills the whole host process.
            let n = send(b.fd, b.toLocal + b.inStart, b.inEnd - b.inStart, Int32(MSG_NOSIGNAL))
            if n > 0 { b.inStart += n; moved = true }
            else if n < 0 && errno != EAGAIN && errno != EINTR { b.closing = true; return true }   // caller closed
        }
        if b.channelEOF && b.inStart == b.inEnd && !b.shutWR { shutdown(b.fd, Int32(SHUT_WR)); b.shutWR = true; moved = true }
        // Caller -> channel: one outstanding write, the same bytes again after EAGAIN.
        if b.outStart == b.outEnd && !b.localEOF {
            let n = read(b.fd, b.toChannel, Bridge.capacity)
            if n > 0 { b.outStart = 0; b.outEnd = n; moved = true }
            else if n == 0 || (errno != EAGAIN && errno != EINTR) { b.localEOF = true; moved = true }
        }
        if b.outStart < b.outEnd {
            let n = libssh2_channel_write_ex(b.channel, 0, (b.toChannel + b.outStart).assumingMemoryBound(to: CChar.self), b.outEnd - b.outStart)
            if n > 0 { b.outStart += n; moved = true }
            else if n != Int(LIBSSH2_ERROR_EAGAIN) { connectionLost(n); b.closing = true; return true }
        }
        if b.localEOF && b.outStart == b.outEnd && !b.eofSent {
            let rc = libssh2_channel_send_eof(b.channel)
            if rc != LIBSSH2_ERROR_EAGAIN { b.eofSent = true; moved = true }
        }
        if b.channelEOF && b.shutWR && (b.eofSent || b.isShell) { b.closing = true; moved = true }
        return moved
    }
}
