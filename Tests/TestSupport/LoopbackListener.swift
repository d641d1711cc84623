import Foundation
import Glibc

/// A TCP socket bound to 127.0.0.1 and a kernel-chosen port, kept for as long as the object
/// lives, so no other program can take the port between a test choosing it and using it.
/// Listening, it never accepts: connections wait in its backlog (a server that never speaks)
/// unless a caller accepts on `fd`. Not listening (`refusing`), every connection to the port is
/// refused: a closed port that stays closed.
public final class LoopbackListener: @unchecked Sendable {
    public let fd: Int32
    public let port: Int

    public init(refusing: Bool = false) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        if !refusing { listen(fd, 8) }
        port = Int(UInt16(bigEndian: addr.sin_port))
    }

    /// A TCP connection to 127.0.0.1:port, or nil when nothing accepts there. The caller closes it.
    /// A client connection to 127.0.0.1:port; `from` another loopback address (127.0.0.2)
    /// makes it a different peer to the server.
    public static func connect(to port: Int, from source: String? = nil) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafeMutablePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { Glibc.close(fd); return nil }
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        let rc = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if rc == 0 { return fd }
        Glibc.close(fd)
        return nil
    }

    /// Client sockets on this machine connected or connecting to the port (queued, or still
    /// sending SYNs to a full backlog), from /proc/net/tcp: a test sees that some program has
    /// started a connection here without accepting it.
    public var clientConnections: Int {
        let table = (FileHandle(forReadingAtPath: "/proc/net/tcp")?.readDataToEndOfFile()).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let remote = String(format: "0100007F:%04X", port)
        // Fields: sl local_address rem_address st ...; the listener itself has rem_address 0.
        return table.split(separator: "\n").dropFirst().filter { $0.split(separator: " ").dropFirst(2).first == Substring(remote) }.count
    }

    private var closed = false
    /// Shuts the socket down first, so a thread blocked in accept() on it (or on a dup of it)
    /// returns instead of waiting on, and then accepting on a reused number.
    public func close() {
        guard !closed else { return }
        closed = true
        _ = shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }
    deinit { close() }
}
