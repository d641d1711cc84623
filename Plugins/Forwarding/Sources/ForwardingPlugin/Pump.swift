import Glibc

/// Bytes waiting to be written to one side, as a list of chunks.
struct ByteQueue {
    private var chunks: [[UInt8]] = []
    private var headOffset = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        chunks.append(Array(bytes.bindMemory(to: UInt8.self)))
        count += bytes.count
    }

    /// Writes as much as fd takes; returns false on a write error other than EAGAIN.
    mutating func flush(to fd: Int32) -> Bool {
        while let head = chunks.first {
            let n = head.withUnsafeBytes { send(fd, $0.baseAddress! + headOffset, $0.count - headOffset, Int32(MSG_NOSIGNAL)) }
            if n < 0 { return errno == EAGAIN || errno == EINTR }
            headOffset += n
            count -= n
            if headOffset == head.count { chunks.removeFirst(); headOffset = 0 }
            if n == 0 { return true }
        }
        return true
    }
}

/// Moves one stream's bytes between the accepted (or connected) local TCP socket and the
/// bridged SSH channel socket, both non-blocking, on the reactor thread.
///
/// Backpressure: a side stops being read once 2 MiB wait for the other side and resumes below
/// 1 MiB (hysteresis, so a slow reader does not make the pump flap). Fairness: one readiness
/// event reads at most a 256 KiB quantum per direction, then the reactor serves other streams.
/// Half-close: end-of-file from one side is passed on (shutdown(SHUT_WR)) only after the bytes
/// already accepted from it have been written, so nothing is cut off; the stream closes when
/// both directions are done, or at once on an error.
final class Pump: ReactorHandler, @unchecked Sendable {
    static let pauseAt = 2 * 1024 * 1024
    static let resumeBelow = 1024 * 1024
    static let quantum = 256 * 1024
    static let chunk = 256 * 1024   // one recv can take a whole quantum

    final class Side {
        let fd: Int32
        var pending = ByteQueue()   // bytes waiting to be written to this side
        var eof = false             // this side sent end-of-file
        var shut = false            // we shut down writing to this side
        var paused = false          // this side is not read: the other side's queue is full
        init(_ fd: Int32) { self.fd = fd }
    }

    private let reactor: Reactor
    private let local: Side
    private let remote: Side
    private let onClose: () -> Void
    private var closed = false

    /// Starts pumping; `initial` are bytes already read from local (after a SOCKS request).
    init(reactor: Reactor, local: Int32, remote: Int32, initial: [UInt8] = [], onClose: @escaping () -> Void) {
        self.reactor = reactor
        self.local = Side(local)
        self.remote = Side(remote)
        self.onClose = onClose
        Sockets.setNonBlocking(local)
        Sockets.setNonBlocking(remote)
        if !initial.isEmpty { initial.withUnsafeBytes { self.remote.pending.append($0) } }
        reactor.add(local, self)
        reactor.add(remote, self)
        if !self.remote.pending.isEmpty { _ = self.remote.pending.flush(to: remote) }
    }

    func interest(_ fd: Int32) -> Int16 {
        let (me, other) = fd == local.fd ? (local, remote) : (remote, local)
        var events: Int16 = 0
        if !me.eof && !me.paused && !other.shut { events |= Int16(POLLIN) }
        if !me.pending.isEmpty { events |= Int16(POLLOUT) }
        return events
    }

    func ready(_ fd: Int32, _ revents: Int16) {
        let (me, other) = fd == local.fd ? (local, remote) : (remote, local)
        if revents & Int16(POLLOUT) != 0 || (revents & Int16(POLLERR | POLLHUP) != 0 && !me.pending.isEmpty) {
            guard me.pending.flush(to: me.fd) else { return abort() }
            // Room again for what `other` sends here.
            if other.paused && me.pending.count < Pump.resumeBelow { other.paused = false }
            passEOF(from: other, to: me)
        }
        if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 && !me.eof && !me.paused {
            guard read(from: me, to: other) else { return abort() }
        }
        finishIfDone()
    }

    /// Reads up to one quantum from `from`, writing through to `to` when it can. False on error.
    private func read(from: Side, to: Side) -> Bool {
        var budget = Pump.quantum
        while budget > 0 && !from.eof {
            let n = recv(from.fd, reactor.scratch, min(Pump.chunk, budget), 0)
            if n > 0 {
                budget -= n
                var sent = 0
                if to.pending.isEmpty {
                    let w = send(to.fd, reactor.scratch, n, Int32(MSG_NOSIGNAL))
                    if w < 0 && errno != EAGAIN && errno != EINTR { return false }
                    sent = max(w, 0)
                }
                if sent < n { to.pending.append(UnsafeRawBufferPointer(start: reactor.scratch + sent, count: n - sent)) }
                if to.pending.count >= Pump.pauseAt { from.paused = true; break }
            } else if n == 0 {
                from.eof = true
            } else {
                if errno == EAGAIN || errno == EINTR { break }
                return false
            }
        }
        passEOF(from: from, to: to)
        return true
    }

    /// Shuts down writing to `to` once `from` ended and everything it sent has gone out.
    private func passEOF(from: Side, to: Side) {
        if from.eof && to.pending.isEmpty && !to.shut {
            shutdown(to.fd, Int32(SHUT_WR))
            to.shut = true
        }
    }

    private func finishIfDone() {
        if local.shut && remote.shut { close() }
    }

    private func abort() { close() }

    private func close() {
        guard !closed else { return }
        closed = true
        reactor.remove(local.fd)
        reactor.remove(remote.fd)
        Glibc.close(local.fd)
        Glibc.close(remote.fd)
        onClose()
    }

    /// Ends the stream now (its rule stopped or the process is shutting down). [reactor]
    func cancel() { close() }

    /// Bytes waiting for each side, and whether each side is paused (for the tests). [reactor]
    var state: (toLocal: Int, toRemote: Int, localPaused: Bool, remotePaused: Bool) {
        (local.pending.count, remote.pending.count, local.paused, remote.paused)
    }
}
