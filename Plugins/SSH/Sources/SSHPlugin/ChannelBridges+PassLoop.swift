import CLibSSH2
import Dispatch
import Glibc
import Synchronization

/// The pass loop: a pass services every bridge and listener without blocking, then, while any
/// is alive, the next pass is queued, so exec() and with_session() calls interleave between
/// passes and the session never has two callers.
extension ChannelBridges {
    /// Interrupts the pass's poll(). Call after `executor.async` from another thread (the
    /// queued block is then ahead of the pass the wake-up schedules); a full pipe already
    /// means "wake up". [any-thread]
    func wake() {
        var one: UInt8 = 1
        _ = write(wakePipe.write, &one, 1)
    }

    /// For a caller about to `executor.sync`: wakes the pass loop and keeps it from sleeping
    /// until the caller's block runs and calls `arrived()`. [any-thread]
    func approach() {
        approaching.add(1, ordering: .sequentiallyConsistent)
        wake()
    }

    /// The caller's block is running on the executor. [executor]
    func arrived() {
        ExecutorCheck.onExecutor(executor)
        approaching.subtract(1, ordering: .sequentiallyConsistent)
    }

    /// Nothing left for a pass to do. [executor]
    var idle: Bool { bridges.isEmpty && listeners.isEmpty && watchers.isEmpty && opens.isEmpty }

    /// Queues the next pass unless one is queued or there is nothing to service. [executor]
    func schedule() {
        ExecutorCheck.onExecutor(executor)
        guard !scheduled, lost == nil, !idle else { return }
        scheduled = true
        executor.async { [self] in BulkCipher.during { pass() } }
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
                if let callerFD = try? bridge(channel, isShell: false, owner: l.owner) {
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
        for b in bridges where b.closing && !b.freed {
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

    /// Sleeps until a socket is ready (or a caller wakes us), then queues the next pass. [executor]
    private func waitAndReschedule() {
        ExecutorCheck.onExecutor(executor)
        let session = connection.session
        var fds = [pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)]
        if libssh2_session_block_directions(session) & LIBSSH2_SESSION_BLOCK_OUTBOUND != 0 { fds[0].events |= Int16(POLLOUT) }
        if pending == nil {
            for b in bridges where !b.fdClosed {
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
}
