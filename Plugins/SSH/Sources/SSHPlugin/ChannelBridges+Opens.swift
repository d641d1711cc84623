import CLibSSH2
import LibSSH2
import CTermhost
import Dispatch
import Glibc
import Synchronization
import TermhostSDK

/// direct-tcpip opens (open_direct_tcpip, splice_direct_tcpip) and the spliced sockets they
/// become. libssh2 keeps one channel open in progress per session, so opens run one at a time,
/// in order, inside the pass loop: while the server connects to a slow target, the other
/// bridges keep moving.
extension ChannelBridges {
    /// A direct-tcpip open waiting its turn. The caller waits on `done`.
    final class PendingOpen: @unchecked Sendable {
        let host: UnsafeMutablePointer<CChar>   // stable across EAGAIN retries (same arguments)
        let port: Int32
        /// The handle that asked (TransportConnection.owner); the bridge is its.
        let owner: UInt64
        var result: Result<Int32, SSHError>?
        let done = DispatchSemaphore(value: 0)
        /// Set for splice_direct_tcpip: nobody waits, the channel is joined to the caller's socket.
        let splice: Splice?
        /// libssh2 has begun this open (it must then finish); end_spliced came meanwhile. [executor]
        var started = false, cancelled = false
        /// Its handle closed while libssh2 had it begun: the caller and the splice's owner were
        /// told then, and whatever comes of it reaches nobody. [executor]
        var orphaned = false
        /// When the open's request went out (ReceiveWindow.now): its answer times a round trip.
        var startedAt: UInt64 = 0
        init(host: String, port: Int32, owner: UInt64, splice: Splice? = nil) {
            self.host = strdup(host)
            self.port = port
            self.owner = owner
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
            guard !orphaned else { return }
            guard let splice else { return finish(.failure(error)) }
            close(splice.fd)
            // Ended by its owner first: what came after is not news to it.
            splice.onDone(cancelled ? Int32(TERMHOST_OK) : Int32(TERMHOST_ERR_IO), cancelled ? "" : error.message)
        }

        /// Its handle closed while libssh2 has it begun: tells the caller (or the splice's
        /// owner, closing its socket) now, and nobody after. [executor]
        func orphan(_ error: SSHError) {
            fail(error)
            orphaned = true
        }
    }

    /// A caller's socket to join to a direct-tcpip channel once it is open.
    struct Splice {
        let fd: Int32
        let initial: [UInt8]
        let stream: UInt64
        let onDone: (Int32, String) -> Void
    }

    /// Queues a direct-tcpip open; the pass loop completes it. [executor]
    func enqueue(_ open: PendingOpen) {
        ExecutorCheck.onExecutor(executor)
        if let lost { open.fail(SSHError(lost)); return }
        opens.append(open)
        schedule()
    }

    /// A new spliced stream's id. [any-thread]
    func newStream() -> UInt64 { streams.add(1, ordering: .relaxed).newValue }

    /// end_spliced: the stream's channel and socket close (a bridge through the pass loop's
    /// free, an open once libssh2 lets it go); its owner hears TERMHOST_OK. Only the handle
    /// `owner`'s own streams. [executor]
    func endSplice(_ stream: UInt64, owner: UInt64) {
        ExecutorCheck.onExecutor(executor)
        // 0 is no stream's id (bridges of our own socket pairs carry it).
        guard stream != 0 else { return }
        if let b = bridges.first(where: { $0.stream == stream && $0.owner == owner && !$0.freed }) {
            b.closing = true
            b.endRequested = true
        } else if let o = opens.first(where: { $0.splice?.stream == stream && $0.owner == owner }) {
            o.cancelled = true
        }
        schedule()
    }

    /// Closes a bridge's socket; a spliced stream's owner is told how it ended. [executor]
    func ended(_ b: Bridge, _ status: Int32, _ message: String) {
        ExecutorCheck.onExecutor(executor)
        guard !b.fdClosed else { return }
        b.fdClosed = true
        close(b.fd)
        guard let done = b.onDone else { return }
        b.onDone = nil
        done(b.endRequested ? Int32(TERMHOST_OK) : status, b.endRequested ? "" : message)
    }

    /// Joins an open channel to a spliced socket. [executor]
    private func join(_ channel: OpaquePointer, _ s: Splice, cancelled: Bool, owner: UInt64) {
        ExecutorCheck.onExecutor(executor)
        _ = fcntl(s.fd, F_SETFL, fcntl(s.fd, F_GETFL) | O_NONBLOCK)
        let b = Bridge(channel: channel, fd: s.fd, callerFD: -1, isShell: false, owner: owner)
        b.window = connection.receiveWindow(grows: true)
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
    func advanceOpen() -> Bool {
        ExecutorCheck.onExecutor(executor)
        guard let open = opens.first else { return true }
        if open.cancelled && !open.started, let s = open.splice {
            opens.removeFirst()
            close(s.fd)
            s.onDone(Int32(TERMHOST_OK), "")
            return true
        }
        if !open.started { open.startedAt = ReceiveWindow.now() }
        open.started = true
        let session = connection.session
        if let channel = libssh2_channel_direct_tcpip_ex(session, open.host, open.port, "127.0.0.1", 0) {
            opens.removeFirst()
            connection.noteRoundTrip(since: open.startedAt)
            if open.orphaned {
                // Its handle closed while the server connected: nobody takes the channel.
                if let callerFD = try? bridge(channel, isShell: false, owner: open.owner), let b = bridges.last {
                    Glibc.close(callerFD)
                    ended(b, Int32(TERMHOST_OK), "")
                    b.closing = true
                }
            } else if let s = open.splice {
                join(channel, s, cancelled: open.cancelled, owner: open.owner)
            } else {
                do { open.finish(.success(try bridge(channel, isShell: false, owner: open.owner))) } catch { open.finish(.failure(error)) }
            }
            return true
        }
        let rc = libssh2_session_last_errno(session)
        if LibSSH2.wouldBlock(rc) {
            _ = halfSent(.open)
            return false
        }
        opens.removeFirst()
        noteFatal(Int(rc))
        open.fail(SSHError("ssh: \(connection.shownAddress) cannot open a channel to \(VisibleText.of(String(cString: open.host))) port \(open.port): \(connection.lastError())"))
        return true
    }
}
