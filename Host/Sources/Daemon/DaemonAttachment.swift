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
final class DaemonAttachment: Sendable {
    /// Bytes of frames a client may leave unread: four full rings of the default size.
    static let limit = 4 << 20

    let fd: Int32
    private struct Outbox {
        var frames: [[UInt8]] = []
        var bytes = 0
        /// Set once: why the attachment ends (the session ended, detach, too slow).
        var reason: String? = nil
        var overflowed = false
    }
    private let outbox = Mutex(Outbox())
    private let wake = DispatchSemaphore(value: 0)
    private let writerDone = DispatchSemaphore(value: 0)
    private let log: @Sendable (String) -> Void

    init(fd: Int32, log: @escaping @Sendable (String) -> Void) {
        self.fd = fd
        self.log = log
    }

    /// Queues a frame; never blocks. Past the limit the queue is dropped and the client is
    /// detached: its reader is woken by shutting the socket's read side down.
    func push(_ type: DaemonMessage, _ payload: [UInt8], first: Bool = false) {
        let encoded = DaemonFrame(type: type.rawValue, payload: payload).encoded()
        let overflowed = outbox.withLock { o -> Bool in
            guard o.reason == nil else { return false }
            if o.bytes + encoded.count > DaemonAttachment.limit {
                o.frames = []
                o.bytes = 0
                o.overflowed = true
                o.reason = "this client did not read \(DaemonAttachment.limit >> 20) MiB of output in time: detached (the session goes on; attach again)"
                return true
            }
            if first { o.frames.insert(encoded, at: 0) } else { o.frames.append(encoded) }
            o.bytes += encoded.count
            return false
        }
        if overflowed {
            log("an attached client fell \(DaemonAttachment.limit >> 20) MiB behind: detached")
            _ = Glibc.shutdown(fd, Int32(SHUT_RD))
        }
        wake.signal()
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
            let (frames, reason) = outbox.withLock { o -> ([[UInt8]], String?) in
                defer { o.frames = []; o.bytes = 0 }
                return (o.frames, o.reason)
            }
            for bytes in frames where alive {
                alive = connection.sendEncoded(bytes)
                if !alive { log("an attached client did not read for \(DaemonConnection.writeTimeout) s: detached") }
            }
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
}
