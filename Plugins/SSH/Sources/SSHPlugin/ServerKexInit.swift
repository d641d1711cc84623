/// The algorithm lists a server offers, read from the first bytes it sent: its identification
/// line (RFC 4253 4.2, possibly after other lines) and its first binary packet, the
/// SSH_MSG_KEXINIT (RFC 4253 7.1), which travels in the clear.
///
/// Why: when libssh2 finds no algorithm in common it says only "Unable to exchange encryption
/// keys"; OpenSSH names the list that did not match and the server's offer. libssh2 does not
/// expose the server's offer after a failed exchange, so the bytes its receive callback
/// delivered are kept during the handshake (at most `maximumCapture`) and read here.
///
/// Untrusted input: every length is checked against what is there and against RFC limits, and
/// a name must be 1-64 printable ASCII characters without a comma, so no name can carry a control
/// character to a terminal. Anything else gives nil. Standard library only, so the fuzz target
/// Tests/Fuzz/ServerKexInitFuzz.swift compiles this file as it is.
struct ServerKexInit: Equatable {
    let keyExchange: [String]
    let hostKey: [String]
    let ciphersClientToServer: [String]
    let ciphersServerToClient: [String]
    let macsClientToServer: [String]
    let macsServerToClient: [String]

    /// Bytes kept from the server: 16 KiB of lines before the packet, and the packet itself
    /// (RFC 4253 6.1: implementations must handle packets of 35,000 bytes).
    static let maximumCapture = 16 * 1024 + maximumPacket
    static let maximumPacket = 35_000
    /// RFC 4253 4.2: the identification line and any line before it, CR LF included.
    static let maximumLine = 255
    static let messageKexInit: UInt8 = 20

    /// The offer in `bytes` (everything the server sent first), or nil when they do not hold an
    /// identification line followed by a whole, well-formed KEXINIT packet.
    static func parse(_ bytes: [UInt8]) -> ServerKexInit? {
        guard let packetStart = afterIdentification(bytes) else { return nil }
        var reader = Reader(bytes: bytes[packetStart...])
        guard let length = reader.uint32(), length >= 5, length <= maximumPacket,
              let packet = reader.take(Int(length)), let padding = packet.first,
              padding >= 4, Int(padding) < packet.count else { return nil }
        var payload = Reader(bytes: packet.dropFirst().dropLast(Int(padding)))
        guard payload.take(1)?.first == messageKexInit, payload.take(16) != nil else { return nil }
        var lists: [[String]] = []
        for _ in 0..<10 {
            guard let list = payload.nameList() else { return nil }
            lists.append(list)
        }
        // first_kex_packet_follows and the reserved uint32.
        guard payload.take(5) != nil else { return nil }
        return ServerKexInit(keyExchange: lists[0], hostKey: lists[1], ciphersClientToServer: lists[2],
                             ciphersServerToClient: lists[3], macsClientToServer: lists[4], macsServerToClient: lists[5])
    }

    /// Where the binary packet starts: after the line beginning "SSH-" and its LF. Lines before
    /// it are skipped, each at most `maximumLine` bytes.
    static func afterIdentification(_ bytes: [UInt8]) -> Int? {
        var start = 0
        while start < bytes.count {
            guard let newline = bytes[start...].prefix(maximumLine).firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            if bytes[start...].starts(with: "SSH-".utf8) {
                return bytes[start...].starts(with: "SSH-2.0-".utf8) || bytes[start...].starts(with: "SSH-1.99-".utf8) ? newline + 1 : nil
            }
            start = newline + 1
        }
        return nil
    }

    /// A cursor over untrusted bytes: every read checks what is left.
    struct Reader {
        var bytes: ArraySlice<UInt8>

        mutating func take(_ n: Int) -> ArraySlice<UInt8>? {
            guard n >= 0, n <= bytes.count else { return nil }
            defer { bytes = bytes.dropFirst(n) }
            return bytes.prefix(n)
        }

        mutating func uint32() -> UInt32? {
            guard let b = take(4) else { return nil }
            return b.reduce(0) { $0 << 8 | UInt32($1) }
        }

        /// RFC 4251 5: a string of comma-separated names; an empty list is allowed, an empty
        /// name is not.
        mutating func nameList() -> [String]? {
            guard let length = uint32(), let text = take(Int(length)) else { return nil }
            if text.isEmpty { return [] }
            var names: [String] = []
            for name in text.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
                guard (1...64).contains(name.count), name.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { return nil }
                names.append(String(decoding: name, as: UTF8.self))
            }
            return names
        }
    }
}
