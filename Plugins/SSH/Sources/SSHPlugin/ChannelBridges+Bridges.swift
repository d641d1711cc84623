import CLibSSH2
import LibSSH2
import CTermhost
import Glibc
import TermhostSDK

/// The bridges: a started channel joined to a local stream socket, and the remote-forward
/// listeners whose accepted channels become bridges.
///
/// Flow control: each direction holds at most one 256 KiB buffer; the channel is not read
/// while the caller's socket has not taken the last chunk, so the SSH window closes and the
/// server stops sending (and the other way round).
extension ChannelBridges {
    final class Bridge {
        let channel: OpaquePointer
        let fd: Int32            // our end, non-blocking
        let callerFD: Int32      // the caller's end, for resize lookups
        let isShell: Bool
        /// The transport handle that opened it (TransportConnection.owner).
        let owner: UInt64
        static let capacity = 256 * 1024
        let toChannel = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
        let toLocal = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
        var outStart = 0, outEnd = 0      // toChannel pending
        var inStart = 0, inEnd = 0        // toLocal pending
        var localEOF = false, eofSent = false, channelEOF = false, shutWR = false, closing = false, freed = false
        /// `fd` is closed and the owner told (`ended`), ahead of the channel's free when its
        /// handle closed while the connection goes on.
        var fdClosed = false
        /// A spliced stream (splice_direct_tcpip): fd is the caller's socket, and onDone is
        /// told once when it is closed. 0 and nil for a bridge of our own socket pair.
        var stream: UInt64 = 0
        var onDone: ((Int32, String) -> Void)?
        /// end_spliced asked for this end: its owner hears TERMHOST_OK however it closes.
        var endRequested = false
        /// What the server may send ahead, grown while the path needs it (server -> caller).
        var window = ReceiveWindow(roundTrip: nil)

        init(channel: OpaquePointer, fd: Int32, callerFD: Int32, isShell: Bool, owner: UInt64) {
            self.channel = channel
            self.fd = fd
            self.callerFD = callerFD
            self.isShell = isShell
            self.owner = owner
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
        /// The handle that listens; the channels it accepts are that handle's too.
        let owner: UInt64
    }

    /// SO_SNDBUF and SO_RCVBUF asked for on both ends of a bridge's socket pair.
    static let socketBuffer: Int32 = 1024 * 1024

    /// Wraps a started channel for the handle `owner`; returns the caller's end. [executor]
    func bridge(_ channel: OpaquePointer, isShell: Bool, owner: UInt64) throws(SSHError) -> Int32 {
        ExecutorCheck.onExecutor(executor)
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            libssh2_channel_free(channel)
            throw SSHError("ssh: socketpair: \(String(cString: strerror(errno)))")
        }
        _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
        // The default AF_UNIX buffer (wmem_default, about 208 KiB) holds less than one of our
        // 256 KiB chunks, so a bulk stream ping-pongs between the caller's thread and this pass
        // loop on every chunk. Asking for 1 MiB a side (the kernel doubles it, capped by
        // net.core.wmem_max) lets each wake-up move whole chunks; flow control is unchanged.
        var size: Int32 = ChannelBridges.socketBuffer
        for fd in pair {
            _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let b = Bridge(channel: channel, fd: pair[0], callerFD: pair[1], isShell: isShell, owner: owner)
        b.window = connection.receiveWindow(grows: !isShell)
        bridges.append(b)
        schedule()
        return pair[1]
    }

    /// Services a remote-forward listener from the next pass on. [executor]
    func addListener(_ l: Listener) {
        ExecutorCheck.onExecutor(executor)
        listeners.append(l)
        schedule()
    }

    /// Stops servicing `owner`'s listener on `port`; the caller cancels it. [executor]
    func removeListener(port: Int32, owner: UInt64) -> OpaquePointer? {
        ExecutorCheck.onExecutor(executor)
        guard let i = listeners.firstIndex(where: { $0.port == port && $0.owner == owner }) else { return nil }
        return listeners.remove(at: i).listener
    }

    /// `owner`'s shell channel whose caller's end is `callerFD`, for window changes. [executor]
    func shell(callerFD: Int32, owner: UInt64) -> OpaquePointer? {
        ExecutorCheck.onExecutor(executor)
        return bridges.first { $0.isShell && !$0.closing && $0.callerFD == callerFD && $0.owner == owner }?.channel
    }

    /// Ends every bridge, listener, open and watch (the connection is closing). [executor]
    func closeAll() {
        ExecutorCheck.onExecutor(executor)
        watchers = []
        let closed = "ssh: the connection to \(connection.shownAddress) was closed"
        for o in opens { o.fail(SSHError(closed)) }
        opens = []
        // A lost session cannot answer: its channels go with libssh2_session_free.
        if lost == nil {
            libssh2_session_set_blocking(connection.session, 1)
            libssh2_session_set_timeout(connection.session, 2000)
            for l in listeners { libssh2_channel_forward_cancel(l.listener) }
            for b in bridges where !b.freed { libssh2_channel_free(b.channel) }
            if let sentinel { libssh2_channel_free(sentinel) }
        }
        for b in bridges where !b.freed { ended(b, Int32(TERMHOST_ERR_IO), closed) }
        listeners = []
        bridges = []
        sentinel = nil
        lost = lost ?? "closed"
    }

    /// Ends what the handle `owner` opened while the connection goes on for its other handles:
    /// its watches stop; its opens fail now (a waiting caller returns, a splice's socket
    /// closes and its owner is told), an open libssh2 has begun is left to finish with nobody
    /// to hand it to (its channel then closes at once); its remote listeners are cancelled;
    /// its bridges' sockets close now and their owners are told, their channels freed by the
    /// pass loop without holding up the other handles. Nothing of the owner's is called after
    /// this returns. [executor]
    func endOwned(by owner: UInt64) {
        ExecutorCheck.onExecutor(executor)
        watchers.removeAll { $0.owner == owner }
        let closed = SSHError("ssh: the handle on the connection to \(connection.shownAddress) was closed")
        for o in opens where o.owner == owner { if o.started { o.orphan(closed) } else { o.fail(closed) } }
        opens.removeAll { $0.owner == owner && !$0.started }
        if lost == nil, listeners.contains(where: { $0.owner == owner }) {
            libssh2_session_set_blocking(connection.session, 1)
            libssh2_session_set_timeout(connection.session, 2000)
            for l in listeners where l.owner == owner { libssh2_channel_forward_cancel(l.listener) }
            libssh2_session_set_timeout(connection.session, connection.timeoutSeconds * 1000)
        }
        listeners.removeAll { $0.owner == owner }
        for b in bridges where b.owner == owner && !b.freed {
            ended(b, Int32(TERMHOST_ERR_IO), closed.message)
            b.closing = true
        }
        schedule()
    }

    /// Frees a closing bridge's channel; the caller's end reads end-of-file. [executor]
    func free(_ b: Bridge) {
        ExecutorCheck.onExecutor(executor)
        guard !b.freed else { return }
        if LibSSH2.wouldBlock(libssh2_channel_free(b.channel)) {
            _ = halfSent(.free(b))
            return
        }
        ended(b, Int32(TERMHOST_OK), "")
        connection.release(b.window)
        b.freed = true
    }

    /// Moves what can move for one bridge; true if any byte moved. Stops at the first call
    /// that leaves a packet half sent. [executor, non-blocking]
    func service(_ b: Bridge) -> Bool {
        ExecutorCheck.onExecutor(executor)
        guard !b.closing else { return false }
        var moved = false
        // Channel -> caller, only when the caller took the last chunk.
        if b.inStart == b.inEnd && !b.channelEOF {
            let n = libssh2_channel_read_ex(b.channel, 0, b.toLocal.assumingMemoryBound(to: CChar.self), Bridge.capacity)
            if n > 0 {
                b.inStart = 0; b.inEnd = n; moved = true
                connection.received(n, on: b.channel, window: &b.window)
            } else if LibSSH2.wouldBlock(n) {
                b.window.empty()
                if halfSent(.read(b)) { return moved }
            }
            else if n < 0 { noteFatal(n); b.closing = true; return true }
            // Nothing reads a bridged channel's stderr; drain it so the window stays open.
            var e = 0
            // As large a read as stream 0's: after a read that would block, libssh2 finishes its
            // pending window adjustment from the next read and counts it by that read's size,
            // so a smaller one would count less than the server was granted (and libssh2 would
            // then cut the server's data short).
            repeat { e = libssh2_channel_read_ex(b.channel, 1, scratch, Bridge.capacity) } while e > 0
            if LibSSH2.wouldBlock(e) && halfSent(.stderr(b)) { return moved }
            if b.inStart == b.inEnd && libssh2_channel_eof(b.channel) != 0 { b.channelEOF = true }
        }
        if b.inStart < b.inEnd {
            // MSG_NOSIGNAL: a caller that closed its end must not raise SIGPIPE in the host.
            let n = send(b.fd, b.toLocal + b.inStart, b.inEnd - b.inStart, Int32(MSG_NOSIGNAL))
            if n > 0 { b.inStart += n; moved = true }
            else if n < 0 && errno != EAGAIN && errno != EINTR { b.closing = true; return true }   // caller closed
        }
        if b.channelEOF && b.inStart == b.inEnd && !b.shutWR { shutdown(b.fd, Int32(SHUT_WR)); b.shutWR = true; moved = true }
        // Caller -> channel: one outstanding write, the same bytes again after EAGAIN.
        if b.outStart == b.outEnd && !b.localEOF {
            let n = read(b.fd, b.toChannel, Bridge.capacity)
            if n > 0 { b.outStart = 0; b.outEnd = n; moved = true }
            else if n == 0 { b.localEOF = true; moved = true }
            // A reset, not an end-of-file: nothing more will come or go that way.
            else if errno != EAGAIN && errno != EINTR { b.closing = true; return true }
        }
        // libssh2 sends at most one packet (32 KiB) a call: keep going while it takes more, so
        // one pass moves the whole chunk instead of a packet.
        while b.outStart < b.outEnd {
            let n = libssh2_channel_write_ex(b.channel, 0, (b.toChannel + b.outStart).assumingMemoryBound(to: CChar.self), b.outEnd - b.outStart)
            if n > 0 { b.outStart += n; moved = true; continue }
            if LibSSH2.wouldBlock(n) { if halfSent(.write(b)) { return moved } else { break } }
            noteFatal(n); b.closing = true; return true
        }
        if b.localEOF && b.outStart == b.outEnd && !b.eofSent {
            let rc = libssh2_channel_send_eof(b.channel)
            if !LibSSH2.wouldBlock(rc) { b.eofSent = true; moved = true }
            else if halfSent(.eof(b)) { return moved }
        }
        if b.channelEOF && b.shutWR && (b.eofSent || b.isShell) { b.closing = true; moved = true }
        return moved
    }
}
