import CLibSSH2
import Glibc

/// A bulk channel's receive window that follows the path, for what the client receives (exec
/// output, -W, a jump host's tunnel, -L and -D server -> client, -R client -> here), as
/// HPN-SSH's dynamic window does.
///
/// Why: the server may send one window per round trip, so the window caps a channel at
/// window / RTT (2 MiB, libssh2's and OpenSSH's default, is ~40 MB/s at 50 ms). The window
/// doubles when, within one round trip, the channel delivered at least half of it AND the
/// reader found nothing left to read at least once: the reader was waiting on the network, so
/// the window, not the reader, held the stream back. A reader that drains slowly (a slow
/// terminal, a local socket nobody reads) always has data waiting, so its window never grows.
/// The round trip counts as at least 5 ms, so on loopback a burst of already buffered data
/// read at memory speed does not look like a fast path.
///
/// Growth is paid from the connection's budget (the receiveWindowMiB setting): what all its
/// channels have grown beyond their opening 2 MiB together, which the owner gives back with
/// `release()` when the channel ends. The size is handed to libssh2
/// (`libssh2_channel_termhost_receive_window`, Termhost's receive-window.patch), whose own
/// reads keep that much advertised; without the patch the window stays as opened.
public struct ReceiveWindow {
    /// libssh2's and OpenSSH's window for a new channel.
    public static let initial = 2 << 20
    /// The shortest round trip counted.
    static let floor: UInt64 = 5_000_000

    public private(set) var size = ReceiveWindow.initial
    private let interval: UInt64?            // nanoseconds; nil: never grows
    private var markedAt: UInt64 = 0
    private var sinceMark = 0
    private var waited = false

    /// A window that grows with a `roundTrip` (seconds) when given; nil: one that never grows
    /// (a terminal's, whose bytes are keystrokes and screens).
    public init(roundTrip: Double?) {
        interval = roundTrip.map { max(UInt64(max($0, 0) * 1e9), ReceiveWindow.floor) }
    }

    private typealias Grow = @convention(c) (OpaquePointer?, UInt) -> UInt
    private static let grow = LibSSH2.optionalFunction("libssh2_channel_termhost_receive_window", as: Grow.self)

    /// A read found nothing waiting (it would block).
    public mutating func empty() { waited = true }

    /// Counts `count` bytes just read from `channel`; grows the window when the last round trip
    /// called for it and `budget` (bytes, the connection's) allows, taking the growth from it.
    /// Returns the new size when it grew (for the debug log), nil otherwise.
    public mutating func received(_ count: Int, on channel: OpaquePointer, budget: inout Int) -> Int? {
        guard let interval, let grow = ReceiveWindow.grow else { return nil }
        let now = ReceiveWindow.now()
        if markedAt == 0 { markedAt = now }
        sinceMark += count
        guard now - markedAt >= interval else { return nil }
        defer { markedAt = now; sinceMark = 0; waited = false }
        let wanted = min(size, budget)
        guard waited, sinceMark >= size / 2, wanted > 0 else { return nil }
        let granted = Int(grow(channel, UInt(size + wanted)))
        budget -= max(0, granted - size)
        size = granted
        return size
    }

    /// What this window took from its connection's budget, to give back when the channel ends.
    public var grown: Int { size - ReceiveWindow.initial }

    /// The monotonic clock in nanoseconds, for round trips and rates.
    public static func now() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }
}
