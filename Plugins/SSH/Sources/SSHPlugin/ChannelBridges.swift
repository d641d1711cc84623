import CLibSSH2
import CTermhost
import Foundation
import Glibc
import Synchronization
import TermhostSDK

/// Channels of one connection bridged to local stream sockets, for the transport service's
/// direct-tcpip, shell and remote-forward calls. Everything here runs on the connection's
/// executor (its serial queue): a pass services every bridge and listener without blocking,
/// then, while any is alive, the next pass is queued, so exec() and with_session() calls
/// interleave between passes and the session never has two callers.
///
/// Flow control: each direction holds at most one 256 KiB buffer; the channel is not read
/// while the caller's socket has not taken the last chunk, so the SSH window closes and the
/// server stops sending (and the other way round).
///
/// Liveness (transport.h `watch`): a watched connection gets a pass loop even when it has no
/// bridges or listeners, with a sentinel session channel (no process started) whose reads make
/// libssh2 read the transport: keepalive replies are consumed, a server disconnect or a socket
/// error surfaces as an error code, and `checkAlive` counts silent keepalive intervals. The
/// first fatal error marks the connection lost, tells every watcher once and ends the bridges.
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
        var localEOF = false, eofSent = false, channelEOF = false, shutWR = false, closing = false, freed = false
        /// A spliced stream (splice_direct_tcpip): fd is the caller's socket, and onDone is
        /// told once when it is closed. 0 and nil for a bridge of our own socket pair.
        var stream: UInt64 = 0
        var onDone: ((Int32, String) -> Void)?
        /// end_spliced asked for this end: its owner hears TERMHOST_OK however it closes.
        var endRequested = false

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

    /// A direct-tcpip open waiting its turn. libssh2 keeps one channel open in progress per
    /// session, so opens run one at a time, in order, inside the pass loop: while the server
    /// connects to a slow target, the other bridges keep moving. The caller waits on `done`.
    final class PendingOpen: @unchecked Sendable {
        let host: UnsafeMutablePointer<CChar>   // stable across EAGAIN retries (same arguments)
        let port: Int32
        var result: Result<Int32, SSHError>?
        let done = DispatchSemaphore(value: 0)
        /// Set for splice_direct_tcpip: nobody waits, the channel is joined to the caller's socket.
        let splice: Splice?
        /// libssh2 has begun this open (it must then finish); end_spliced came meanwhile. [executor]
        var started = false, cancelled = false
        init(host: String, port: Int32, splice: Splice? = nil) {
            self.host = strdup(host)
            self.port = port
            self.splice = splice
        }
        deinit { Glibc.free(host) }

        func finish(_ r: Result<Int32, SSHError>) {
            result = r
            done.signal()
        }

        /// The open failed (or never ran): the waiting caller gets the error; a splice's socket
        /// is closed and its owner told.
        func fail(_ error: SSHError) {
            guard let splice else { return finish(.failure(error)) }
            close(splice.fd)
            // Ended by its owner first: what came after is not news to it.
            splice.onDone(cancelled ? Int32(TERMHOST_OK) : Int32(TERMHOST_ERR_IO), cancelled ? "" : error.message)
        }
    }

    /// A caller's socket to join to a direct-tcpip channel once it is open.
    struct Splice {
        let fd: Int32
        let initial: [UInt8]
        let stream: UInt64
        let onDone: (Int32, String) -> Void
    }

    struct Watcher {
        let onLost: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void
        let user: UnsafeMutableRawPointer?
    }

    let connection: SSHConnection
    let executor: DispatchQueue
    private(set) var bridges: [Bridge] = []
    private(set) var listeners: [Listener] = []
    private var watchers: [Watcher] = []
    private var opens: [PendingOpen] = []
    /// A session channel opened only so that a watched, idle connection still reads its transport.
    private var sentinel: OpaquePointer?
    /// Why the connection died; nil while it is alive. Read and written on the executor.
    private(set) var lost: String?
    private var scheduled = false
    /// Wakes a pass sleeping in poll() so calls queued on the executor do not wait out its timeout.
    /// A self-pipe (read end, write end), both non-blocking.
    private let wakePipe: (read: Int32, write: Int32)

    init(connection: SSHConnection, executor: DispatchQueue) {
        self.connection = connection
        self.executor = executor
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
        }
        wakePipe = (fds[0], fds[1])
    }

    deinit {
        if wakePipe.read >= 0 { close(wakePipe.read); close(wakePipe.write) }
        scratch.deallocate()
    }

    /// Interrupts the pass's poll(). Call after `executor.async` from another thread (the
    /// queued block is then ahead of the pass the wake-up schedules); a full pipe already
    /// means "wake up". [any-thread]
    func wake() {
        var one: UInt8 = 1
        _ = write(wakePipe.write, &one, 1)
    }

    /// Callers between `approach()` and `arrived()`. While any is on its way, a pass does not
    /// sleep in poll(): the wake-up byte alone is not enough, because a pass queued before the
    /// caller's `executor.sync` block can drain it and then sleep up to 1 s ahead of that block.
    private let approaching = Atomic<Int>(0)

    /// For a caller about to `executor.sync`: wakes the pass loop and keeps it from sleeping
    /// until the caller's block runs and calls `arrived()`. [any-thread]
    func approach() {
        approaching.add(1, ordering: .sequentiallyConsistent)
        wake()
    }

    /// The caller's block is running on the executor. [executor]
    func arrived() { approaching.subtract(1, ordering: .sequentiallyConsistent) }

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
            guard let channel = libssh2_channel_open_ex(connection.session, "session", 7, 64 * 1024, 32 * 1024, nil, 0) else {
                throw SSHError("ssh: \(connection.shownAddress) cannot open a channel to watch the connection: \(connection.lastError())")
            }
            sentinel = channel
        }
        watchers.append(w)
        schedule()
    }

    /// When the last liveness probe went out, and whether its reply is still awaited.
    private var lastProbe = time(nil)
    private var probing = false
    /// The connection's keepalive settings, taken over from libssh2 by watch().
    private var probeInterval = 0
    private var probeCountMax = 3

    /// Dead-peer detection for a watched connection: every keepaliveInterval seconds a
    /// "keepalive@openssh.com" request on the sentinel channel, wanting a reply (the server
    /// answers failure, which is all we need: bytes came back). A channel request, not a global
    /// one, so its reply can never be mistaken for a tcpip-forward answer (see watch()). Declares the connection lost
    /// after interval x count seconds without a byte from the server, as ServerAliveCountMax
    /// does. False when the connection was marked lost. [executor, non-blocking]
    private func probeAlive(_ sentinel: OpaquePointer) -> Bool {
        let interval = probeInterval
        guard interval > 0 else { return true }
        let now = time(nil)
        if !probing && Int(now - lastProbe) >= interval {
            probing = true
            lastProbe = now
        }
        if probing {
            let rc = libssh2_channel_process_startup(sentinel, "keepalive@openssh.com", 21, nil, 0)
            if rc != LIBSSH2_ERROR_EAGAIN { probing = false } else if halfSent(.probe(sentinel)) { return true }
            if ChannelBridges.isFatal(Int(rc)) {
                markLost(lostMessage(Int32(rc)))
                return false
            }
        }
        if Int(now - connection.lastReceive) > ConnectionSettings.silenceLimit(interval: interval, count: probeCountMax) {
            markLost("Timeout, server \(connection.shownAddress) not responding.")
            return false
        }
        return true
    }

    /// What an operator should read for a fatal code: the likely cause first, libssh2's words after.
    private func lostMessage(_ rc: Int32) -> String {
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

    /// Marks the connection lost: ends bridges and listeners (their channels are freed with the
    /// session) and tells each watcher once. [executor]
    private func markLost(_ reason: String) {
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

    /// SO_SNDBUF and SO_RCVBUF asked for on both ends of a bridge's socket pair.
    static let socketBuffer: Int32 = 1024 * 1024

    /// Scratch for stderr reads nobody consumes (and the sentinel's reads). [executor]
    private let scratch = UnsafeMutablePointer<CChar>.allocate(capacity: 4096)

    /// Wraps a started channel; returns the caller's end. [executor]
    func bridge(_ channel: OpaquePointer, isShell: Bool) throws(SSHError) -> Int32 {
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
        bridges.append(Bridge(channel: channel, fd: pair[0], callerFD: pair[1], isShell: isShell))
        schedule()
        return pair[1]
    }

    func addListener(_ l: Listener) { listeners.append(l); schedule() }

    func removeListener(port: Int32) -> OpaquePointer? {
        guard let i = listeners.firstIndex(where: { $0.port == port }) else { return nil }
        return listeners.remove(at: i).listener
    }

    func shell(callerFD: Int32) -> OpaquePointer? { bridges.first { $0.isShell && $0.callerFD == callerFD }?.channel }

    /// Ends every bridge and listener (the connection is closing). [executor]
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
            for b in bridges { libssh2_channel_free(b.channel) }
            if let sentinel { libssh2_channel_free(sentinel) }
        }
        for b in bridges where !b.freed { ended(b, Int32(TERMHOST_ERR_IO), closed) }
        listeners = []
        bridges = []
        sentinel = nil
        lost = lost ?? "closed"
    }

    private var idle: Bool { bridges.isEmpty && listeners.isEmpty && watchers.isEmpty && opens.isEmpty }

    /// Queues a direct-tcpip open; the pass loop completes it. [executor]
    func enqueue(_ open: PendingOpen) {
        ExecutorCheck.onExecutor(executor)
        if let lost { open.fail(SSHError(lost)); return }
        opens.append(open)
        schedule()
    }

    /// Ids of spliced streams, never reused on this connection. [any-thread]
    private let streams = Atomic<UInt64>(0)
    func newStream() -> UInt64 { streams.add(1, ordering: .relaxed).newValue }

    /// end_spliced: the stream's channel and socket close (a bridge through the pass loop's
    /// free, an open once libssh2 lets it go); its owner hears TERMHOST_OK. [executor]
    func endSplice(_ stream: UInt64) {
        // 0 is no stream's id (bridges of our own socket pairs carry it).
        guard stream != 0 else { return }
        if let b = bridges.first(where: { $0.stream == stream && !$0.freed }) {
            b.closing = true
            b.endRequested = true
        } else if let o = opens.first(where: { $0.splice?.stream == stream }) {
            o.cancelled = true
        }
        schedule()
    }

    /// Closes a bridge's socket; a spliced stream's owner is told how it ended. [executor]
    private func ended(_ b: Bridge, _ status: Int32, _ message: String) {
        close(b.fd)
        guard let done = b.onDone else { return }
        b.onDone = nil
        done(b.endRequested ? Int32(TERMHOST_OK) : status, b.endRequested ? "" : message)
    }

    /// Joins an open channel to a spliced socket. [executor]
    private func join(_ channel: OpaquePointer, _ s: Splice, cancelled: Bool) {
        _ = fcntl(s.fd, F_SETFL, fcntl(s.fd, F_GETFL) | O_NONBLOCK)
        let b = Bridge(channel: channel, fd: s.fd, callerFD: -1, isShell: false)
        b.stream = s.stream
        b.onDone = s.onDone
        b.endRequested = cancelled
        s.initial.withUnsafeBytes { if !$0.isEmpty { b.toChannel.copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
        b.outEnd = s.initial.count
        // Ended while the server was still connecting: free it the ordinary way.
        b.closing = cancelled
        bridges.append(b)
    }

    /// Tries the first queued open without blocking; false while it is still in progress.
    /// [executor, non-blocking, no half-sent packet]
    private func advanceOpen() -> Bool {
        guard let open = opens.first else { return true }
        if open.cancelled && !open.started, let s = open.splice {
            opens.removeFirst()
            close(s.fd)
            s.onDone(Int32(TERMHOST_OK), "")
            return true
        }
        open.started = true
        let session = connection.session
        if let channel = libssh2_channel_direct_tcpip_ex(session, open.host, open.port, "127.0.0.1", 0) {
            opens.removeFirst()
            if let s = open.splice {
                join(channel, s, cancelled: open.cancelled)
            } else {
                do { open.finish(.success(try bridge(channel, isShell: false))) } catch { open.finish(.failure(error)) }
            }
            return true
        }
        let rc = libssh2_session_last_errno(session)
        if rc == LIBSSH2_ERROR_EAGAIN {
            _ = halfSent(.open)
            return false
        }
        opens.removeFirst()
        noteFatal(Int(rc))
        open.fail(SSHError("ssh: \(connection.shownAddress) cannot open a channel to \(VisibleText.of(String(cString: open.host))) port \(open.port): \(connection.lastError())"))
        return true
    }

    private func schedule() {
        guard !scheduled, lost == nil, !idle else { return }
        scheduled = true
        executor.async { [self] in pass() }
    }

    /// One non-blocking round over everything, then a short wait when nothing moved. [executor]
    private func pass() {
        ExecutorCheck.onExecutor(executor)
        scheduled = false
        // Checked before touching the session: a pass queued before close() runs after
        // closeAll() and teardown(), when the session is already freed.
        guard lost == nil else { return }
        let session = connection.session
        libssh2_session_set_blocking(session, 0)
        defer { libssh2_session_set_blocking(session, 1) }
        var progressed = false
        if pending != nil {
            if retryPending() { progressed = true } else { return waitAndReschedule() }
        }
        if let sentinel, pending == nil {
            // Reading the sentinel reads the transport; it never carries data itself (and its
            // window is never used up, so the read never sends a window adjust).
            let rc = libssh2_channel_read_ex(sentinel, 0, scratch, 256)
            if rc < 0 && ChannelBridges.isFatal(rc) {
                markLost(lostMessage(Int32(rc)))
                return
            }
            let wasProbing = probing
            guard probeAlive(sentinel) else { return }
            // Its reply may have left more bytes in the receive buffer than libssh2 took:
            // go round again rather than poll a socket they already left (ReceiveBuffer).
            if wasProbing && !probing { progressed = true }
        }
        for l in listeners where pending == nil {
            while let channel = libssh2_channel_forward_accept(l.listener) {
                if let callerFD = try? bridge(channel, isShell: false) {
                    // libssh2 1.10 does not report the originator of a forwarded connection.
                    l.onAccept(l.user, callerFD, "", 0)
                }
                progressed = true
            }
            noteFatal(Int(libssh2_session_last_errno(session)))
        }
        if pending == nil && !opens.isEmpty {
            let before = opens.count
            while pending == nil && !opens.isEmpty && advanceOpen() {}
            if opens.count != before { progressed = true }
        }
        for b in bridges {
            if pending != nil { break }
            if service(b) { progressed = true }
        }
        if let fatal { markLost(fatal); return }
        for b in bridges where b.closing {
            if pending != nil { break }
            free(b)
            // libssh2 reads until the close reply, not until EAGAIN: see the probe above.
            if b.freed { progressed = true }
        }
        bridges.removeAll { $0.freed }
        guard !idle else { return }
        if !progressed || pending != nil { return waitAndReschedule() }
        schedule()
    }

    /// Sleeps until a socket is ready (or a caller wakes us), then queues the next pass.
    private func waitAndReschedule() {
        let session = connection.session
        var fds = [pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)]
        if libssh2_session_block_directions(session) & LIBSSH2_SESSION_BLOCK_OUTBOUND != 0 { fds[0].events |= Int16(POLLOUT) }
        if pending == nil {
            for b in bridges {
                var events: Int16 = 0
                if b.outStart == b.outEnd && !b.localEOF { events |= Int16(POLLIN) }
                if b.inStart < b.inEnd { events |= Int16(POLLOUT) }
                if events != 0 { fds.append(pollfd(fd: b.fd, events: events, revents: 0)) }
            }
        }
        // Only timers (keepalive) need a wake-up when no data can move: sleep longer then.
        let timeout: Int32 = approaching.load(ordering: .sequentiallyConsistent) > 0 ? 0 : bridges.isEmpty && pending == nil ? 1000 : 50
        _ = poll(&fds, nfds_t(fds.count), timeout)
        var drained = [UInt8](repeating: 0, count: 64)
        if fds[1].revents != 0 { while read(wakePipe.read, &drained, drained.count) > 0 {} }
        schedule()
    }

    /// The session error a bridge ran into during this pass, if any. [executor]
    private var fatal: String?

    private func noteFatal(_ rc: Int) {
        if fatal == nil && ChannelBridges.isFatal(rc) {
            fatal = lostMessage(Int32(rc))
        }
    }

    /// A libssh2 call that returned EAGAIN with its packet half sent. libssh2 1.10 refuses any
    /// other packet until that one has gone (transport.c send_existing: LIBSSH2_ERROR_BAD_USE,
    /// fatal to whichever stream called next; fixed only in 1.11.1), so until it is finished
    /// that call alone is retried, with the same arguments, and nothing else is sent.
    private enum Pending {
        case read(Bridge), stderr(Bridge), write(Bridge), eof(Bridge), free(Bridge), probe(OpaquePointer), open
    }
    private var pending: Pending?

    private var outboundBlocked: Bool {
        libssh2_session_block_directions(connection.session) & LIBSSH2_SESSION_BLOCK_OUTBOUND != 0
    }

    /// After a call returned EAGAIN: true (and remembered) when it left a packet half sent.
    private func halfSent(_ call: Pending) -> Bool {
        guard outboundBlocked else { return false }
        pending = call
        return true
    }

    /// Retries the pending call once; true when it finished (or failed). [executor, non-blocking]
    private func retryPending() -> Bool {
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
            rc = libssh2_channel_read_ex(b.channel, 1, scratch, 4096)
        case .write(let b):
            rc = libssh2_channel_write_ex(b.channel, 0, (b.toChannel + b.outStart).assumingMemoryBound(to: CChar.self), b.outEnd - b.outStart)
            if rc > 0 { b.outStart += rc }
        case .eof(let b):
            rc = Int(libssh2_channel_send_eof(b.channel))
            if rc != Int(LIBSSH2_ERROR_EAGAIN) { b.eofSent = true }
        case .free(let b):
            free(b)
            return pending == nil
        case .probe(let sentinel):
            rc = Int(libssh2_channel_process_startup(sentinel, "keepalive@openssh.com", 21, nil, 0))
            if rc != Int(LIBSSH2_ERROR_EAGAIN) { probing = false }
        case .open:
            _ = advanceOpen()
            return pending == nil
        }
        if rc == Int(LIBSSH2_ERROR_EAGAIN) { return !halfSent(call) }
        if rc < 0 && rc != Int(LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED) {
            noteFatal(rc)
            switch call {
            case .read(let b), .stderr(let b), .write(let b), .eof(let b): b.closing = true
            default: break
            }
        }
        return true
    }

    /// Finishes a half-sent packet before other work uses the session (exec, opens, close);
    /// bounded: after 5 s the next call reports the failure itself. [executor]
    func flushPending() {
        ExecutorCheck.onExecutor(executor)
        guard pending != nil || !opens.isEmpty, lost == nil else { pending = nil; return }
        libssh2_session_set_blocking(connection.session, 0)
        defer { libssh2_session_set_blocking(connection.session, 1) }
        let deadline = time(nil) + 5
        while !retryPending() && time(nil) < deadline {
            var p = pollfd(fd: connection.socket, events: Int16(POLLOUT | POLLIN), revents: 0)
            _ = poll(&p, 1, 100)
        }
        pending = nil
        // A channel open in progress keeps session-wide state in libssh2: finish the queued
        // opens before a call that may open a channel itself (exec, shell, SFTP).
        while !opens.isEmpty && lost == nil && time(nil) < deadline {
            if !advanceOpen() {
                var p = pollfd(fd: connection.socket, events: Int16(POLLIN | (outboundBlocked ? POLLOUT : 0)), revents: 0)
                _ = poll(&p, 1, 100)
                _ = retryPending()
            }
        }
        if let fatal { markLost(fatal) }
        for o in opens { o.fail(SSHError("ssh: \(connection.shownAddress) did not answer a channel open in time")) }
        opens = []
        bridges.removeAll { $0.freed }
    }

    /// Frees a closing bridge's channel; the caller's end reads end-of-file. [executor]
    private func free(_ b: Bridge) {
        if libssh2_channel_free(b.channel) == LIBSSH2_ERROR_EAGAIN {
            _ = halfSent(.free(b))
            return
        }
        ended(b, Int32(TERMHOST_OK), "")
        b.freed = true
    }

    /// Moves what can move for one bridge; true if any byte moved. Stops at the first call
    /// that leaves a packet half sent. [executor, non-blocking]
    private func service(_ b: Bridge) -> Bool {
        guard !b.closing else { return false }
        var moved = false
        // Channel -> caller, only when the caller took the last chunk.
        if b.inStart == b.inEnd && !b.channelEOF {
            let n = libssh2_channel_read_ex(b.channel, 0, b.toLocal.assumingMemoryBound(to: CChar.self), Bridge.capacity)
            if n > 0 { b.inStart = 0; b.inEnd = n; moved = true }
            else if n == Int(LIBSSH2_ERROR_EAGAIN) { if halfSent(.read(b)) { return moved } }
            else if n < 0 { noteFatal(n); b.closing = true; return true }
            // Nothing reads a bridged channel's stderr; drain it so the window stays open.
            var e = 0
            repeat { e = libssh2_channel_read_ex(b.channel, 1, scratch, 4096) } while e > 0
            if e == Int(LIBSSH2_ERROR_EAGAIN) && halfSent(.stderr(b)) { return moved }
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
            if n == Int(LIBSSH2_ERROR_EAGAIN) { if halfSent(.write(b)) { return moved } else { break } }
            noteFatal(n); b.closing = true; return true
        }
        if b.localEOF && b.outStart == b.outEnd && !b.eofSent {
            let rc = libssh2_channel_send_eof(b.channel)
            if rc != LIBSSH2_ERROR_EAGAIN { b.eofSent = true; moved = true }
            else if halfSent(.eof(b)) { return moved }
        }
        if b.channelEOF && b.shutWR && (b.eofSent || b.isShell) { b.closing = true; moved = true }
        return moved
    }
}
