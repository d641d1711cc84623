/// The bytes of a SOCKS4 or SOCKS4a client's CONNECT request, parsed without any socket, for
/// the same reasons as Socks5Parser (the fuzz target feeds both anything). Standard library only.
///
/// SOCKS4: version 4, command, port (2 bytes), IPv4 address (4), a user ID ending in NUL.
/// SOCKS4a: the address 0.0.0.x (x not 0) says a host name follows the user ID, also ending in
/// NUL, for the proxy (here: the server) to resolve. The user ID is read and ignored (no
/// identification is done, as OpenSSH's -D does); the longest request waited for is
/// `maxMessage` bytes.
enum Socks4Parser {
    /// 8 fixed bytes, a user ID and a host name of at most 255 bytes each, with their NULs.
    static let maxMessage = 8 + 256 + 256

    /// SOCKS4 reply codes: 90 granted, 91 rejected or failed.
    static let granted: UInt8 = 90, rejected: UInt8 = 91

    static func request(_ b: ArraySlice<UInt8>) -> Socks5Parser.Request {
        guard b.count >= 8 else { return .incomplete }
        let s = b.startIndex
        guard b[s] == 4 else { return .invalid("malformed SOCKS4 request (version byte \(b[s]))") }
        let command = b[s + 1]
        let port = Int(b[s + 2]) << 8 | Int(b[s + 3])
        let ip = Array(b[(s + 4)..<(s + 8)])
        // The user ID: up to its NUL, at most 255 bytes.
        guard let userEnd = b[(s + 8)...].prefix(256).firstIndex(of: 0) else {
            return b.count - 8 > 255 ? .invalid("the SOCKS4 user ID is longer than 255 bytes") : .incomplete
        }
        var consumed = userEnd - s + 1
        var address = Socks5Parser.Address.ipv4(ip)
        if ip[0] == 0 && ip[1] == 0 && ip[2] == 0 && ip[3] != 0 {
            // SOCKS4a: a host name after the user ID.
            guard let nameEnd = b[(userEnd + 1)...].prefix(256).firstIndex(of: 0) else {
                return b.count - consumed > 255 ? .invalid("the SOCKS4a host name is longer than 255 bytes") : .incomplete
            }
            let name = Array(b[(userEnd + 1)..<nameEnd])
            consumed = nameEnd - s + 1
            guard !name.isEmpty else { return .refused(.hostUnreachable, "the SOCKS4a client sent an empty host name", consumed: consumed) }
            address = .domain(name)
        }
        guard command == 1 else {
            return .refused(.commandNotSupported, "SOCKS4 command \(command) is not supported (only CONNECT)", consumed: consumed)
        }
        guard port > 0 else { return .refused(.generalFailure, "the SOCKS client asked for port 0", consumed: consumed) }
        return .connect(address, port: port, consumed: consumed)
    }
}
