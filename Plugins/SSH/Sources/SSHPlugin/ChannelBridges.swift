import CLibSSH2
import Dispatch
import Glibc
import Synchronization

/// Channels of one connection bridged to local stream sockets, for the transport service's
/// direct-tcpip, shell and remote-forward calls. Everything here runs on the connection's
/// executor (its serial queue), except what is marked [any-thread]; debug builds check it
/// (ExecutorCheck), so the tag cannot drift from the code.
///
/// The class is split by job, one file each; this file holds its state:
/// - ChannelBridges+PassLoop.swift: the pass loop (schedule, pass, the poll wait, wake-ups);
/// - ChannelBridges+HalfSent.swift: libssh2 1.10's half-sent packet rule (HalfSentPacket.swift)
///   as the pass loop keeps it: the one call to retry, and the flush before another caller;
/// - ChannelBridges+Watch.swift: the connection watch (sentinel channel, keepalive, loss);
/// - ChannelBridges+Opens.swift: direct-tcpip opens, one at a time, and spliced sockets;
/// - ChannelBridges+Bridges.swift: the bridges themselves (flow control), listeners, closeAll.
final class ChannelBridges: @unchecked Sendable {
    let connection: SSHConnection
    let executor: DispatchQueue

    // Bridges (+Bridges); the pass loop services them, the watch and closeAll end them.
    var bridges: [Bridge] = []
    var listeners: [Listener] = []
    /// Scratch for stderr reads nobody consumes (and the sentinel's reads). [executor]
    let scratch = UnsafeMutablePointer<CChar>.allocate(capacity: Bridge.capacity)

    // Opens (+Opens).
    var opens: [PendingOpen] = []
    /// Ids of spliced streams, never reused on this connection. [any-thread]
    let streams = Atomic<UInt64>(0)

    // The watch (+Watch).
    var watchers: [Watcher] = []
    /// A session channel opened only so that a watched, idle connection still reads its transport.
    var sentinel: OpaquePointer?
    /// Why the connection died; nil while it is alive. Read and written on the executor.
    var lost: String?
    /// When the last liveness probe went out, and whether its reply is still awaited.
    var lastProbe = time(nil)
    var probing = false
    /// The connection's keepalive settings, taken over from libssh2 by watch().
    var probeInterval = 0
    var probeCountMax = 3
    /// The session error a bridge ran into during this pass, if any. [executor]
    var fatal: String?

    // The half-sent packet (+HalfSent): the call to finish before anything else is sent.
    var pending: Pending?

    // The pass loop (+PassLoop).
    var scheduled = false
    /// Wakes a pass sleeping in poll() so calls queued on the executor do not wait out its timeout.
    /// A self-pipe (read end, write end), both non-blocking.
    let wakePipe: (read: Int32, write: Int32)
    /// Callers between `approach()` and `arrived()`. While any is on its way, a pass does not
    /// sleep in poll(): the wake-up byte alone is not enough, because a pass queued before the
    /// caller's `executor.sync` block can drain it and then sleep up to 1 s ahead of that block.
    let approaching = Atomic<Int>(0)

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
}
