import CLibSSH2
import Glibc

/// A bulk channel's receive window that follows the path, for what the client receives (exec
/// output, -L and -D server -> client), as HPN-SSH's dynamic window does.
///
/// Why: the server may send one window per round trip, so the window caps a channel at
/// window / RTT (2 MiB, libssh2's and OpenSSH's default, is ~40 MB/s at 50 ms). The window
/// doubles, up to `cap`, when the channel delivered at least half of it within one round trip:
/// the window, not the client, was holding the stream back. A client that drains slowly (a
/// slow terminal, a slow local socket) never receives that much per round trip, so its window
/// stays small: no window the client cannot drain. On loopback (a round trip of microseconds)
/// nothing ever grows.
///
/// The round trip is the connection's (SSHConnection.roundTrip: the quickest channel open it
/// has seen, one request and its answer); without one the window stays as opened. The size is
/// handed to libssh2 (`libssh2_channel_termhost_receive_window`, Termhost's receive-window.patch),
/// whose own reads then keep that much advertised; without the patch the window stays as
/// opened. One per channel, used by whoever reads it.
public struct ReceiveWindow {
    /// libssh2's and OpenSSH's window for a new channel.
    public static let initial = 2 << 20

    public let cap: Int
    public private(set) var size = ReceiveWindow.initial
    private let roundTrip: UInt64?          // nanoseconds
    private var markedAt: UInt64 = 0
    private var sinceMark = 0

    /// `cap` in bytes (the receiveWindowMiB setting); `roundTrip` in seconds, nil if unknown.
    public init(cap: Int, roundTrip: Double?) {
        self.cap = max(cap, ReceiveWindow.initial)
        self.roundTrip = roundTrip.map { UInt64(max($0, 0) * 1e9) }
    }

    private typealias Grow = @convention(c) (OpaquePointer?, UInt) -> UInt
    private static let grow: Grow? = {
        guard let library = dlopen("libssh2.so.1", RTLD_LAZY | RTLD_NOLOAD) else { return nil }
        defer { dlclose(library) }
        return dlsym(library, "libssh2_channel_termhost_receive_window").map { unsafeBitCast($0, to: Grow.self) }
    }()

    /// Whether the loaded libssh2 can grow a window.
    public static var available: Bool { grow != nil }

    /// Counts `count` bytes just read from `channel`; returns the new size when the window grew
    /// (for the debug log), nil otherwise.
    public mutating func received(_ count: Int, on channel: OpaquePointer) -> Int? {
        guard let roundTrip, let grow = ReceiveWindow.grow, size < cap else { return nil }
        let now = ReceiveWindow.now()
        if markedAt == 0 { markedAt = now }
        sinceMark += count
        guard now - markedAt >= roundTrip else { return nil }
        defer { markedAt = now; sinceMark = 0 }
        guard sinceMark >= size / 2 else { return nil }
        size = Int(grow(channel, UInt(min(cap, size * 2))))
        return size
    }

    /// The monotonic clock in nanoseconds, for round trips and rates.
    public static func now() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }
}
