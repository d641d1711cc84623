import Foundation
import Glibc
import Synchronization

/// What the daemon owes one attached client: the frames its session produced that the client
/// has not read yet, written by a thread of its own.
///
/// Why a queue and a writer thread: a session's output reaches every attached client from the
/// session's thread, which must never wait for any one client (a slow mirror would hold up the
/// others, and the shell). So the session only appends here; the writer drains. A client that
/// lets `limit` bytes pile up is told why (a last `detached` frame, if it reads at all) and
/// detached; the session goes on.
///
/// With `terminal` (a client that passed its terminal, Docs/Daemon.md), output goes to that
/// terminal directly, as raw bytes, and only events and the end go over the socket: the
/// client's process is not on the keystroke's way back.
final class DaemonAttachment: Sendable {
    /// Bytes of frames a client may leave unread: four full rings of the default size.
    static let limit = 4 << 20

    let fd: Int32
    /// The client's terminal, opened here for writing without blocking (a file description of
    /// the daemon's own, so the client's is left as it was); nil for output in frames.
    let terminal: Int32?
    private struct Entry {
        var bytes: [UInt8]
        var toTerminal: Bool
    }
    private struct Outbox {
        var frames: [Entry] = []
        var bytes = 0
        /// Whether the writer thread is sending: while it is, or while frames wait, a new frame
        /// queues behind them; otherwise `push` tries the socket itself first.
        var writing = false
        /// Whether the writer started (until then, frames only queue: the reply goes first).
        var started = false
        /// Set once: why the attachment ends (the session ended, detach, too slow).
        var reason: String? = nil
        var overflowed = false
    }
    private let outbox = Mutex(Outbox())
    private let wake = DispatchSemaphore(value: 0)
    private let writerDone = DispatchSemaphore(value: 0)
    private let log: @Sendable (String) -> Void

    init(fd: Int32, terminal: Int32? = nil, log: @escaping @Sendable (String) -> Void) {
        self.fd = fd
        self.terminal = terminal
        self.log = log
    }

    /// Queues a frame; never blocks. When nothing is queued or being written, the frame goes
    /// straight to the socket without waiting (MSG_DONTWAIT), saving the writer thread's wake-up
    /// on the keystroke path; what the socket does not take at once is queued. Past the limit
    /// the queue is dropped and the client is detached: its reader is woken by shutting the
    /// socket's read side down.
    ///
    /// `first` puts the frame before everything queued (the reply to attach, which must precede
    /// the replay queued during the attach) and is never dropped. `counted: false` leaves the
    /// frame out of the limit: the replay, bounded by the ring's own size (up to 64 MiB), which
    /// a client must be able to take however large the operator made the ring.
    func push(_ type: DaemonMessage, _ payload: [UInt8], first: Bool = false, counted: Bool = true) {
        let toTerminal = terminal != nil && type == .output
        var encoded = toTerminal ? payload : DaemonFrame(type: type.rawValue, payload: payload).encoded()
        enum Outcome { case sent, queued, overflowed }
        let outcome = outbox.withLock { o -> Outcome in
            // Ending: nothing more goes out, but for the reply, which comes before the end.
            guard o.reason == nil || first else { return .sent }
            if o.started && !o.writing && o.frames.isEmpty && !first {
                let sent = encoded.withUnsafeBytes { bytes in
                    toTerminal ? Glibc.write(terminal!, bytes.baseAddress, bytes.count)
                        : Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                }
                if sent == encoded.count { return .sent }
                // The rest of this frame, queued as bytes: the writer sends it before anything else.
                if sent > 0 { encoded.removeFirst(sent) }
            }
            if counted && o.bytes + encoded.count > DaemonAttachment.limit {
                // The first queued entry may be the rest of a frame the socket took in part:
                // it stays, so the last frame the client reads starts where a frame starts.
                o.frames = Array(o.frames.prefix(1))
                o.bytes = o.frames.first?.bytes.count ?? 0
                o.overflowed = true
                o.reason = "this client did not read \(DaemonAttachment.limit >> 20) MiB of output in time: detached (the session goes on; attach again)"
                return .overflowed
            }
            let entry = Entry(bytes: encoded, toTerminal: toTerminal)
            if first { o.frames.insert(entry, at: 0) } else { o.frames.append(entry) }
            if counted { o.bytes += encoded.count }
            return .queued
        }
        switch outcome {
        case .sent: return
        case .queued: wake.signal()
        case .overflowed:
            log("an attached client fell \(DaemonAttachment.limit >> 20) MiB behind: detached")
            _ = Glibc.shutdown(fd, Int32(SHUT_RD))
            wake.signal()
        }
    }

    /// The attachment ends: what is queued is still written, then the `detached` frame with
    /// `reason` (the first reason given wins), then the connection is shut down.
    func finish(_ reason: String) {
        outbox.withLock { o in if o.reason == nil { o.reason = reason } }
        wake.signal()
    }

    var overflowed: Bool { outbox.withLock { $0.overflowed } }

    /// Starts the writer thread.
    func start() {
        outbox.withLock { $0.started = true }
        let thread = Thread { [self] in write() }
        thread.name = "termhost-daemon-attach-writer"
        thread.start()
    }

    /// Waits for the writer to have sent the last frame (or given up on the client).
    func waitWritten() { writerDone.wait() }

    private func write() {
        defer { writerDone.signal() }
        let connection = DaemonConnection(fd: fd)
        var alive = true
        while true {
            wake.wait()
            let (frames, reason) = outbox.withLock { o -> ([Entry], String?) in
                defer { o.frames = []; o.bytes = 0; o.writing = true }
                return (o.frames, o.reason)
            }
            for entry in frames where alive {
                alive = entry.toTerminal ? writeTerminal(entry.bytes) : connection.sendEncoded(entry.bytes)
                if !alive { log("an attached client did not read for \(DaemonConnection.writeTimeout) s: detached") }
            }
            // Frames pushed while this one wrote are in the queue, and signalled: next round.
            outbox.withLock { $0.writing = false }
            guard let reason else {
                if alive { continue }
                // The client stopped reading: end its reader too, so the detach happens.
                _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
                finish("this client did not read for \(DaemonConnection.writeTimeout) s")
                continue
            }
            if alive { _ = connection.send(DaemonFrame(type: DaemonMessage.detached.rawValue, payload: DaemonProtocol.payload(["reason": reason]))) }
            _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
            return
        }
    }

    /// Writes to the terminal, waiting for room at most `writeTimeout` seconds at a time (a
    /// terminal stopped with Ctrl-S for longer is a client that does not read).
    private func writeTerminal(_ bytes: [UInt8]) -> Bool {
        guard let terminal else { return false }
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { Glibc.write(terminal, $0.baseAddress, $0.count) }
            if n > 0 { done += n; continue }
            if n < 0 && errno == EINTR { continue }
            guard n < 0 && errno == EAGAIN else { return false }
            var room = pollfd(fd: terminal, events: Int16(POLLOUT), revents: 0)
            guard poll(&room, 1, Int32(DaemonConnection.writeTimeout * 1000)) == 1 else { return false }
        }
        return true
    }
}
