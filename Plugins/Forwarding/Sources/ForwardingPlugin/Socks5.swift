import Glibc

/// The SOCKS5 server side of a -D rule (RFC 1928), on the reactor: the "no authentication"
/// method and the CONNECT command to an IPv4 address, an IPv6 address or a domain name. The
/// name is sent to the server as is (direct-tcpip), so DNS happens there and never blocks
/// this plugin. Replies use RFC 1928's codes.
final class Socks5Handshake: ReactorHandler, @unchecked Sendable {
    enum Reply: UInt8 {
        case succeeded = 0, generalFailure = 1, notAllowed = 2, networkUnreachable = 3, hostUnreachable = 4,
             connectionRefused = 5, commandNotSupported = 7, addressTypeNotSupported = 8
    }

    private let fd: Int32
    private let reactor: Reactor
    private var buffer: [UInt8] = []
    private var greeted = false
    private var done = false
    /// Called with the target once the request is complete; the handshake is then off the
    /// reactor until `finish` is called.
    private let onConnect: (Socks5Handshake, String, Int) -> Void
    private let onFail: (String) -> Void

    init(fd: Int32, reactor: Reactor, onConnect: @escaping (Socks5Handshake, String, Int) -> Void,
         onFail: @escaping (String) -> Void) {
        self.fd = fd
        self.reactor = reactor
        self.onConnect = onConnect
        self.onFail = onFail
        reactor.add(fd, self)
    }

    func interest(_ fd: Int32) -> Int16 { done ? 0 : Int16(POLLIN) }

    func ready(_ fd: Int32, _ revents: Int16) {
        var chunk = [UInt8](repeating: 0, count: 512)
        let n = recv(fd, &chunk, chunk.count, 0)
        if n <= 0 {
            if n < 0 && (errno == EAGAIN || errno == EINTR) { return }
            return fail(nil, "the client closed the connection during the SOCKS handshake")
        }
        buffer += chunk[0..<n]
        if !greeted { greet() }
        if greeted && !done { request() }
    }

    private func greet() {
        guard buffer.count >= 2 else { return }
        guard buffer[0] == 5 else { return fail(nil, "not a SOCKS5 client (version byte \(buffer[0]))") }
        let count = Int(buffer[1])
        guard buffer.count >= 2 + count else { return }
        let methods = buffer[2..<(2 + count)]
        buffer.removeFirst(2 + count)
        guard methods.contains(0) else {
            write([5, 0xFF])
            return fail(nil, "the SOCKS client offers no method this forward accepts (only 'no authentication')")
        }
        write([5, 0])
        greeted = true
    }

    private func request() {
        guard buffer.count >= 4 else { return }
        guard buffer[0] == 5 else { return fail(.generalFailure, "malformed SOCKS5 request (version byte \(buffer[0]))") }
        let command = buffer[1], type = buffer[3]
        let addressLength: Int
        switch type {
        case 1: addressLength = 4
        case 4: addressLength = 16
        case 3:
            guard buffer.count >= 5 else { return }
            addressLength = 1 + Int(buffer[4])
        default: return fail(.addressTypeNotSupported, "SOCKS address type \(type) is not supported")
        }
        let total = 4 + addressLength + 2
        guard buffer.count >= total else { return }
        let address = Array(buffer[4..<(4 + addressLength)])
        let port = Int(buffer[total - 2]) << 8 | Int(buffer[total - 1])
        buffer.removeFirst(total)
        guard command == 1 else { return fail(.commandNotSupported, "SOCKS command \(command) is not supported (only CONNECT)") }
        let host: String
        switch type {
        case 1, 4:
            var text = [CChar](repeating: 0, count: 64)
            _ = address.withUnsafeBytes { inet_ntop(type == 1 ? AF_INET : AF_INET6, $0.baseAddress, &text, 64) }
            host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        default:
            host = String(decoding: address.dropFirst(), as: UTF8.self)
        }
        done = true
        onConnect(self, host, port)
    }

    /// Bytes the client sent after its request: the start of the stream.
    var leftover: [UInt8] { buffer }

    /// Replies success and hands the socket over (the caller builds the pump), or replies the
    /// failure and closes. [reactor]
    func finish(_ reply: Reply) {
        reactor.remove(fd)
        write([5, reply.rawValue, 0, 1, 0, 0, 0, 0, 0, 0])
        if reply != .succeeded { Glibc.close(fd) }
    }

    private func fail(_ reply: Reply?, _ reason: String) {
        if let reply { write([5, reply.rawValue, 0, 1, 0, 0, 0, 0, 0, 0]) }
        done = true
        reactor.remove(fd)
        Glibc.close(fd)
        onFail(reason)
    }

    /// Replies are a few bytes on a fresh socket: the send buffer takes them at once.
    private func write(_ bytes: [UInt8]) { _ = send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) }

    /// The reply for a failed channel open, from the server's reason (RFC 4254 §5.1 codes as
    /// libssh2 words them).
    static func reply(for message: String) -> Reply {
        if message.contains("prohibited") { return .notAllowed }
        if message.contains("connect failed") { return .connectionRefused }
        return .generalFailure
    }
}
