import CLibSSH2
import Glibc

/// The half-sent packet rule of libssh2 1.10, in one place for the bridges' pass loop
/// (ChannelBridges+HalfSent.swift) and the stepped exec (SteppedExec.swift).
///
/// A non-blocking call that returns EAGAIN while the session waits to write has left its
/// packet half sent in the transport. libssh2 1.10 refuses any other packet until that one has
/// gone (transport.c send_existing: LIBSSH2_ERROR_BAD_USE, fatal to whichever stream called
/// next; fixed only in 1.11.1), so until it is finished that call alone is retried, with the
/// same arguments (the same pointer and length), and nothing else is sent on the session. An
/// EAGAIN with nothing half sent (a closed channel window, no data yet) leaves the session free.
///
/// Finishing is bounded: a server that takes nothing for `bound` seconds is gone.
enum HalfSentPacket {
    /// Seconds a half-sent packet may take to go.
    static let bound: time_t = 5

    /// After a call returned EAGAIN: true when it left a packet half sent. [executor]
    @inline(__always)
    static func isLeft(in session: OpaquePointer) -> Bool {
        libssh2_session_block_directions(session) & LIBSSH2_SESSION_BLOCK_OUTBOUND != 0
    }

    /// For a call that left a packet half sent: waits (at most 100 ms a time) for the socket,
    /// then `retry` repeats the call and answers whether the packet has gone, until it has
    /// (true) or `deadline` has passed (false). [executor, non-blocking]
    static func finish(socket: Int32, by deadline: time_t, retry: () -> Bool) -> Bool {
        repeat {
            guard time(nil) <= deadline else { return false }
            var p = pollfd(fd: socket, events: Int16(POLLOUT | POLLIN), revents: 0)
            _ = poll(&p, 1, 100)
        } while !retry()
        return true
    }
}
