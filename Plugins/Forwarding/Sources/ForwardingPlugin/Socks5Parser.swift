/// The bytes of a SOCKS5 client's greeting and CONNECT request (RFC 1928), parsed without any
/// socket: the handshake on the reactor feeds it what it reads, and the fuzz target
/// (Tests/Fuzz/Socks5Fuzz.swift) feeds it anything. Standard library only, for that reason.
///
/// Nothing here trusts the client: every length byte is checked against what arrived, a
/// domain name is returned as bytes (the caller shows it with VisibleText), and the largest
/// message the parser ever waits for is `maxMessage` bytes, so a client cannot make it buffer
/// more than that.
enum Socks5Parser {
    /// The longest greeting (2 + 255 methods) or request (4 + 1 + 255 + 2) there is.
    static let maxMessage = 262

    /// RFC 1928 reply codes.
    enum Reply: UInt8 {
        case succeeded = 0, generalFailure = 1, notAllowed = 2, networkUnreachable = 3, hostUnreachable = 4,
             connectionRefused = 5, commandNotSupported = 7, addressTypeNotSupported = 8
    }

    enum Address: Equatable {
        case ipv4([UInt8])       // 4 bytes
        case ipv6([UInt8])       // 16 bytes
        case domain([UInt8])     // 0...255 bytes, exactly as the client sent them
    }

    enum Greeting: Equatable {
        case incomplete
        /// `consumed` bytes were the greeting; `noAuthOffered`: method 0 is among the methods.
        case complete(consumed: Int, noAuthOffered: Bool)
        case invalid(String)
    }

    enum Request: Equatable {
        case incomplete
        case connect(Address, port: Int, consumed: Int)
        /// A complete request that is refused with `reply` (after `consumed` bytes).
        case refused(Reply, String, consumed: Int)
        /// Not a SOCKS5 request at all: answered with `generalFailure` and closed.
        case invalid(String)
    }

    static func greeting(_ b: ArraySlice<UInt8>) -> Greeting {
        guard b.count >= 2 else { return .incomplete }
        let start = b.startIndex
        guard b[start] == 5 else { return .invalid("not a SOCKS client (version byte \(b[start]); SOCKS4, 4a and 5 are served)") }
        let count = Int(b[start + 1])
        guard b.count >= 2 + count else { return .incomplete }
        return .complete(consumed: 2 + count, noAuthOffered: b[(start + 2)..<(start + 2 + count)].contains(0))
    }

    static func request(_ b: ArraySlice<UInt8>) -> Request {
        guard b.count >= 4 else { return .incomplete }
        let s = b.startIndex
        guard b[s] == 5 else { return .invalid("malformed SOCKS5 request (version byte \(b[s]))") }
        let command = b[s + 1], type = b[s + 3]
        let addressLength: Int
        switch type {
        case 1: addressLength = 4
        case 4: addressLength = 16
        case 3:
            guard b.count >= 5 else { return .incomplete }
            addressLength = 1 + Int(b[s + 4])
        default:
            return .refused(.addressTypeNotSupported, "SOCKS address type \(type) is not supported", consumed: b.count)
        }
        let total = 4 + addressLength + 2
        guard b.count >= total else { return .incomplete }
        let raw = Array(b[(s + 4)..<(s + 4 + addressLength)])
        let port = Int(b[s + total - 2]) << 8 | Int(b[s + total - 1])
        guard command == 1 else {
            return .refused(.commandNotSupported, "SOCKS command \(command) is not supported (only CONNECT)", consumed: total)
        }
        let address: Address
        switch type {
        case 1: address = .ipv4(raw)
        case 4: address = .ipv6(raw)
        default:
            let name = Array(raw.dropFirst())
            // An empty name or one with a NUL cannot be a host name; refusing it here keeps
            // the C string handed to the SSH plugin identical to what the client sent.
            guard !name.isEmpty, !name.contains(0) else {
                return .refused(.hostUnreachable, "the SOCKS client sent an empty host name or one with a NUL byte", consumed: total)
            }
            address = .domain(name)
        }
        guard port > 0 else { return .refused(.generalFailure, "the SOCKS client asked for port 0", consumed: total) }
        return .connect(address, port: port, consumed: total)
    }
}
