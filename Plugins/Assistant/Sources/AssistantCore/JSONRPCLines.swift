/// MCP's stdio framing: one JSON-RPC message per line, lines ended by "\n" (a "\r" before it is
/// dropped), blank lines skipped. The client is untrusted, so a line is bounded: once it grows
/// past `maxLineBytes` without a newline its bytes are counted and dropped up to the next
/// newline, and the line comes out as `.oversized(count)` for the server to answer with an error
/// instead of buffering without end.
///
/// Items do not depend on how the input is cut into chunks (the fuzz target checks this).
/// This file uses nothing but the standard library, so the fuzz target compiles it as it is.
public struct JSONRPCLines: Sendable {
    public enum Item: Sendable, Equatable {
        /// One line without its terminator; never longer than `maxLineBytes`.
        case line([UInt8])
        /// A line of `bytes` bytes (the newline excluded, a "\r" before it counted) that was
        /// longer than the bound; its bytes were not kept.
        case oversized(bytes: Int)
    }

    public let maxLineBytes: Int
    private var buffer: [UInt8] = []
    /// Bytes of the current line counted and dropped, or nil while it is still within bounds.
    private var dropped: Int?

    public init(maxLineBytes: Int) { self.maxLineBytes = max(1, maxLineBytes) }

    /// Takes the next chunk of the stream; returns the lines it completed, in order.
    public mutating func feed<C: Collection>(_ bytes: C) -> [Item] where C.Element == UInt8 {
        var items: [Item] = []
        var rest = bytes[...]
        while let newline = rest.firstIndex(of: 0x0A) {
            take(rest[..<newline])
            if let item = end() { items.append(item) }
            rest = rest[rest.index(after: newline)...]
        }
        take(rest)
        return items
    }

    /// The stream ended: the last line if it had no newline (an oversized one as such).
    public mutating func finish() -> Item? { end() }

    private mutating func take<S: Collection>(_ part: S) where S.Element == UInt8 {
        if let count = dropped {
            dropped = count + part.count
        } else if buffer.count + part.count > maxLineBytes + 1 {
            // One byte of slack: a "\r" before the newline does not count against the bound.
            dropped = buffer.count + part.count
            buffer = []
        } else {
            buffer.append(contentsOf: part)
        }
    }

    private mutating func end() -> Item? {
        defer { buffer = []; dropped = nil }
        if let count = dropped { return .oversized(bytes: count) }
        if buffer.last == 0x0D { buffer.removeLast() }
        if buffer.count > maxLineBytes { return .oversized(bytes: buffer.count) }
        guard buffer.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { return nil }
        return .line(buffer)
    }
}
