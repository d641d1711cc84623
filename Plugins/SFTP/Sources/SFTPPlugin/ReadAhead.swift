import Foundation
import Glibc

/// How much one `libssh2_sftp_read` call asks for, chosen per download from its round trip.
///
/// libssh2 1.10 keeps four times the buffer it is given in flight, so the buffer sets the
/// read-ahead, and the read-ahead must cover what the link carries in one round trip or the
/// transfer waits on it. A larger buffer is not free, though: the reading thread fills it and
/// the writer's thread copies it into the page cache, and buffers past the CPU's cache make
/// both copies go to memory (Docs/SFTP.md, Speed: on loopback a 1.8 MB buffer made downloads
/// a third slower than a 360 KB one).
///
/// So the read-ahead covers what a 10 Gbit/s link carries in the round trip, between 1.44 MB
/// (round trips up to 1.15 ms) and 7.2 MB (from 5.76 ms). The round trip is timed on the two
/// requests every download makes anyway (open, then fstat of the handle), the faster of them:
/// end to end, so a server behind a tunnel or jump hosts counts its whole path (the socket's own
/// TCP round trip would see only the first hop, a local tunnel's loopback), and with the
/// server's time to answer in it, which errs towards the larger buffer, never the smaller.
enum ReadAhead {
    /// libssh2 1.10 splits reads into requests of at most this many bytes.
    static let request = 30_000
    static let smallest = 12 * request         // 360 KB buffer, 1.44 MB in flight
    static let largest = 60 * request          // 1.8 MB buffer, 7.2 MB in flight
    static let linkBytesPerSecond = 1_250_000_000.0   // 10 Gbit/s

    /// The buffer for a round trip of `roundTripMicroseconds`.
    static func buffer(roundTripMicroseconds rtt: UInt64) -> Int {
        let inFlight = linkBytesPerSecond * Double(rtt) / 1_000_000
        let requests = Int(min((inFlight / 4 / Double(request)).rounded(.up), Double(largest / request)))
        return min(max(requests * request, smallest), largest)
    }

    /// For the debug log: "round trip 0.12 ms; reading 360 KB at a time, 1.44 MB ahead".
    static func describe(buffer: Int, roundTripMicroseconds rtt: UInt64) -> String {
        String(format: "round trip %.2f ms; reading %d KB at a time, %.2f MB ahead",
               Double(rtt) / 1000, buffer / 1000, Double(4 * buffer) / 1_000_000)
    }
}

/// Microseconds on the monotonic clock, between laps.
struct Stopwatch {
    private var last = Stopwatch.now()

    /// The time since the previous lap (or the start), and a new lap begins.
    mutating func lap() -> UInt64 {
        let now = Stopwatch.now()
        defer { last = now }
        return now - last
    }

    private static func now() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000 + UInt64(t.tv_nsec) / 1000
    }
}
