/// SFTP v3 packets on a channel termhost drives itself (SFTPPipe): requests it builds, and the
/// byte stream a server sends cut into replies. Every reply is a server's bytes, so every
/// length is checked against what is there before it is used. Standard library only, so the
/// fuzz target Tests/Fuzz/SFTPRepliesFuzz.swift compiles it as it is.
enum SFTPPacket {
    /// The request types a pipeline sends (draft-ietf-secsh-filexfer-02, SFTP v3).
    static let open: UInt8 = 3, close: UInt8 = 4, read: UInt8 = 5, write: UInt8 = 6, fstat: UInt8 = 8, fsetstat: UInt8 = 10,
               remove: UInt8 = 13, rename: UInt8 = 18, extended: UInt8 = 200
    /// Open flags.
    static let reading: UInt32 = 0x01, writing: UInt32 = 0x02, creating: UInt32 = 0x08, truncating: UInt32 = 0x10,
               exclusive: UInt32 = 0x20
    /// Attribute flags.
    static let size: UInt32 = 0x01, owners: UInt32 = 0x02, permissions: UInt32 = 0x04, times: UInt32 = 0x08,
               extendedAttributes: UInt32 = 0x8000_0000
    /// SSH_FX_EOF: a read at or past the end.
    static let endOfFile: UInt32 = 1

    /// type, id, then the fields as they come.
    static func request(_ type: UInt8, _ id: UInt32, _ fields: (inout [UInt8]) -> Void) -> [UInt8] {
        var body: [UInt8] = [type]
        body.appendUInt32(id)
        fields(&body)
        return body
    }
}

/// What a server answered a request (the kinds a pipeline waits for).
enum SFTPReply: Equatable {
    /// SSH_FXP_STATUS: 0 is success.
    case status(id: UInt32, code: UInt32)
    /// SSH_FXP_HANDLE: at most 256 bytes (the protocol's limit).
    case handle(id: UInt32, handle: [UInt8])
    /// SSH_FXP_DATA: what a read returned.
    case data(id: UInt32, bytes: [UInt8])
    /// SSH_FXP_ATTRS: the attributes a pipeline uses (nil: the server did not send it).
    case attributes(id: UInt32, size: UInt64?, permissions: UInt32?, mtime: UInt64?)
    /// Any other reply to request `id` (a pipeline treats it as a failure of that request).
    case other(id: UInt32, type: UInt8)

    var id: UInt32 {
        switch self {
        case .status(let id, _), .handle(let id, _), .data(let id, _), .attributes(let id, _, _, _), .other(let id, _): id
        }
    }

    /// The reply a packet body holds; nil when it is too short for its kind or a handle is
    /// longer than the protocol allows (the stream is then not SFTP, and is given up).
    static func parse(_ packet: [UInt8]) -> SFTPReply? {
        guard packet.count >= 5 else { return nil }
        let id = packet.uint32(at: 1)
        switch packet[0] {
        case 101:
            guard packet.count >= 9 else { return nil }
            return .status(id: id, code: packet.uint32(at: 5))
        case 102:
            guard packet.count >= 9 else { return nil }
            let n = Int(packet.uint32(at: 5))
            guard n <= 256, n <= packet.count - 9 else { return nil }
            return .handle(id: id, handle: Array(packet[9..<(9 + n)]))
        case 103:
            guard packet.count >= 9 else { return nil }
            let n = Int(packet.uint32(at: 5))
            guard n <= packet.count - 9 else { return nil }
            return .data(id: id, bytes: Array(packet[9..<(9 + n)]))
        case 105:
            return attributes(packet, id: id)
        default:
            return .other(id: id, type: packet[0])
        }
    }
}

extension SFTPReply {
    /// SSH_FXP_ATTRS from offset 5: flags, then the fields they announce, in order; nil when
    /// one runs past the packet.
    private static func attributes(_ packet: [UInt8], id: UInt32) -> SFTPReply? {
        var at = 5
        func number() -> UInt32? {
            guard at <= packet.count - 4 else { return nil }
            defer { at += 4 }
            return packet.uint32(at: at)
        }
        guard let flags = number() else { return nil }
        var size: UInt64?, permissions: UInt32?, mtime: UInt64?
        if flags & SFTPPacket.size != 0 {
            guard let high = number(), let low = number() else { return nil }
            size = UInt64(high) << 32 | UInt64(low)
        }
        if flags & SFTPPacket.owners != 0 { guard number() != nil, number() != nil else { return nil } }
        if flags & SFTPPacket.permissions != 0 {
            guard let p = number() else { return nil }
            permissions = p
        }
        if flags & SFTPPacket.times != 0 {
            guard number() != nil, let m = number() else { return nil }
            mtime = UInt64(m)
        }
        // Extended pairs may follow; nothing here needs them.
        return .attributes(id: id, size: size, permissions: permissions, mtime: mtime)
    }
}

/// Cuts the bytes a server sends into packet bodies: a 32-bit length, then that many bytes.
struct SFTPFrames {
    /// The longest packet taken: OpenSSH's sftp-server sends none over 256 KiB, and a pipeline
    /// reads only short replies; a longer one is no SFTP this client speaks.
    static let maximum = 256 * 1024 + 1024

    struct Malformed: Error, Equatable {
        let length: UInt32
    }

    private var buffer: [UInt8] = []
    private var start = 0

    mutating func append(_ bytes: UnsafeRawBufferPointer) { buffer.append(contentsOf: bytes) }

    /// The next whole packet's body, or nil until more bytes come. Throws on a length of 0 or
    /// past `maximum`.
    mutating func next() throws(Malformed) -> [UInt8]? {
        guard buffer.count - start >= 4 else { return nil }
        let length = buffer.uint32(at: start)
        guard length > 0, length <= SFTPFrames.maximum else { throw Malformed(length: length) }
        guard buffer.count - start - 4 >= Int(length) else { return nil }
        let body = Array(buffer[(start + 4)..<(start + 4 + Int(length))])
        start += 4 + Int(length)
        // Bytes read are dropped once they are half the buffer, not at every packet.
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        return body
    }
}

extension [UInt8] {
    mutating func appendUInt64(_ v: UInt64) { appendUInt32(UInt32(v >> 32)); appendUInt32(UInt32(v & 0xffff_ffff)) }
    mutating func appendBytes(_ b: [UInt8]) { appendUInt32(UInt32(b.count)); append(contentsOf: b) }
}
