/// The unit of the daemon's attach protocol (Docs/Daemon.md): a 4-byte payload length and a
/// 4-byte type, both big-endian unsigned, then the payload.
///
///     +----------------+----------------+---------------------+
///     | length (u32be) |  type (u32be)  |  payload (length B) |
///     +----------------+----------------+---------------------+
///
/// Why this shape: it is OpenSSH's mux framing (length, type, body), which a client in any
/// language writes in a few lines; the type is outside the payload so a receiver can skip a
/// frame it does not know without parsing it. The length is checked against a limit before any
/// byte of the payload is held, so a peer cannot make the daemon buffer more than one limit.
///
/// This file uses nothing but the standard library, so the fuzz target compiles it as it is.
public struct DaemonFrame: Equatable, Sendable {
    public var type: UInt32
    public var payload: [UInt8]

    public init(type: UInt32, payload: [UInt8]) {
        self.type = type
        self.payload = payload
    }

    /// Bytes before the payload.
    public static let headerSize = 8
    /// The largest payload either side accepts: far more than any request or reply, and a bound
    /// on what one client can make the daemon hold.
    public static let maxPayload = 1 << 20

    /// The frame as it goes on the wire.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(DaemonFrame.headerSize + payload.count)
        for value in [UInt32(payload.count), type] {
            out.append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)])
        }
        out.append(contentsOf: payload)
        return out
    }
}

/// Splits a byte stream into frames. Never throws and never traps: bytes are fed as they
/// arrive, in any pieces, and `next()` answers a frame, "need more", or why the stream is
/// malformed. Malformed is final (the stream has lost its framing; the connection is closed).
public struct DaemonFrameDecoder: Sendable {
    public enum Next: Equatable, Sendable {
        case frame(DaemonFrame)
        case needMore
        case malformed(String)
    }

    public let maxPayload: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var failure: String?

    public init(maxPayload: Int = DaemonFrame.maxPayload) {
        self.maxPayload = maxPayload
    }

    /// Bytes received and not yet part of a whole frame: a stream that ends with some is
    /// truncated.
    public var pendingBytes: Int { buffer.count - start }

    public mutating func feed(_ bytes: some Sequence<UInt8>) {
        guard failure == nil else { return }
        buffer.append(contentsOf: bytes)
    }

    public mutating func next() -> Next {
        if let failure { return .malformed(failure) }
        guard pendingBytes >= DaemonFrame.headerSize else { return .needMore }
        let length = Int(word(at: start))
        let type = word(at: start + 4)
        guard length <= maxPayload else {
            failure = "a frame of \(length) bytes, over the limit of \(maxPayload)"
            return .malformed(failure!)
        }
        guard type != 0 else {
            failure = "a frame of type 0, which no frame has"
            return .malformed(failure!)
        }
        guard pendingBytes >= DaemonFrame.headerSize + length else { return .needMore }
        let body = start + DaemonFrame.headerSize
        let frame = DaemonFrame(type: type, payload: Array(buffer[body..<body + length]))
        start = body + length
        // Drop what was read once it is most of the buffer, so a long stream is not kept.
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.count <= 2 * DaemonFrame.headerSize + maxPayload)
            start = 0
        } else if start > 65_536 && start > buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        return .frame(frame)
    }

    private func word(at i: Int) -> UInt32 {
        UInt32(buffer[i]) << 24 | UInt32(buffer[i + 1]) << 16 | UInt32(buffer[i + 2]) << 8 | UInt32(buffer[i + 3])
    }
}
