import Foundation
import Glibc

/// How much one `libssh2_sftp_read` call asks for, chosen per connection from its round trip.
///
/// libssh2 1.10 keeps four times the buffer it is given in flight, so the buffer sets the
/// read-ahead, and the read-ahead must cover what the link carries in one round trip or the
/// transfer waits on it. A larger buffer is not free, though: the reading thread fills it and
/// the writer's thread copies it into the page cache, and a buffer past the CPU's cache makes
/// both copies go to memory. Measured on loopback (Docs/SFTP.md, Speed), a 1.8 MB buffer made
/// the writer's copy cost 9 times what it costs at 360 KB, and downloads 25% slower.
///
/// So the read-ahead covers a 10 Gbit/s link for the measured round trip, between 1.44 MB
/// (covers a 1.2 ms round trip) and 7.2 MB. Without a measurement (a socket that is not TCP,
/// as through a jump host's channel), the largest.
enum ReadAhead {
    /// libssh2 1.10 splits reads into requests of at most this many bytes.
    static let request = 30_000
    static let smallest = 12 * request         // 360 KB buffer, 1.44 MB in flight
    static let largest = 60 * request          // 1.8 MB buffer, 7.2 MB in flight
    static let linkBytesPerSecond = 1_250_000_000.0   // 10 Gbit/s

    /// The buffer for a connection whose smoothed round trip is `roundTripMicroseconds`.
    static func buffer(roundTripMicroseconds: UInt32?) -> Int {
        guard let rtt = roundTripMicroseconds else { return largest }
        let inFlight = linkBytesPerSecond * Double(rtt) / 1_000_000
        let requests = Int((inFlight / 4 / Double(request)).rounded(.up))
        return min(max(requests * request, smallest), largest)
    }

    /// For the debug log: "smallest round trip 0.05 ms; downloads read 360 KB at a time, 1.44 MB ahead".
    static func describe(buffer: Int, roundTripMicroseconds rtt: UInt32?) -> String {
        let trip = rtt.map { String(format: "smallest round trip %.2f ms", Double($0) / 1000) } ?? "round trip unknown (not a TCP socket)"
        return "\(trip); downloads read \(buffer / 1000) KB at a time, \(String(format: "%.2f", Double(4 * buffer) / 1_000_000)) MB ahead"
    }

    /// The smallest round trip the kernel has seen on a TCP socket, or nil for any other
    /// socket. The smallest, not the smoothed: a round trip sample includes the time the peer
    /// took to answer, and during the handshake sshd computes (on a loaded loopback the
    /// smoothed figure was 2.4 ms where the wire takes 0.05). The bytes the link holds are its
    /// rate times the smallest round trip, as BBR estimates them.
    static func roundTripMicroseconds(socket: Int32) -> UInt32? {
        // glibc's struct tcp_info ends before tcpi_min_rtt (Linux 4.6), so the kernel's layout
        // (linux/tcp.h, append-only) is read from its bytes.
        let smoothedAt = 68, smallestAt = 148
        var info = [UInt8](repeating: 0, count: 256)
        var length = socklen_t(info.count)
        guard getsockopt(socket, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0 else { return nil }
        func field(_ offset: Int) -> UInt32? {
            guard Int(length) >= offset + 4 else { return nil }
            return info.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
        }
        if let smallest = field(smallestAt), smallest != 0, smallest != UInt32.max { return smallest }
        return field(smoothedAt)
    }
}
