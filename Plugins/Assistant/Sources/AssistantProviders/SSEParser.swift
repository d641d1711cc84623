/// One server-sent event: its `event:` type ("message" when the server gave none) and its
/// `data:` lines joined by "\n".
struct SSEEvent: Sendable, Equatable {
    var type: String
    var data: String
}

/// Why an event stream was refused.
enum SSEParserError: Error, Equatable {
    /// One line, or one event's data, grew past `maxEventBytes`.
    case eventTooLarge(limit: Int)
}

/// Design: the event-stream format of the HTML standard ("Parsing an event stream"), fed bytes as
/// they arrive, split anywhere (inside a line ending, inside a UTF-8 scalar). Lines end with CRLF,
/// LF or CR; a CR at the end of one chunk and an LF at the start of the next are one line ending.
/// `:` starts a comment (keep-alives); `event:` sets the type; `data:` lines accumulate; a blank
/// line dispatches the event, unless it has no data. One space after the colon is dropped. `id:`
/// and `retry:` are ignored: a model request is never resumed. A partial event when the stream
/// ends is dropped, as the standard says. Bytes are decoded as UTF-8 per whole line, invalid
/// sequences replaced, so a scalar split across chunks arrives intact.
///
/// Memory is bounded: a line or an event's data longer than `maxEventBytes` is an error.
///
/// This file uses nothing but the standard library, so the fuzz target compiles it as it is.
struct SSEParser {
    let maxEventBytes: Int
    private var line: [UInt8] = []
    private var afterCR = false
    private var atStart = true
    private var eventType = ""
    private var data: [UInt8] = []
    private var hasData = false

    init(maxEventBytes: Int = 16 << 20) {
        self.maxEventBytes = maxEventBytes
    }

    /// Feeds the next bytes of the stream; returns the events they completed, in order.
    mutating func feed<Bytes: Sequence>(_ bytes: Bytes) throws(SSEParserError) -> [SSEEvent] where Bytes.Element == UInt8 {
        var events: [SSEEvent] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == 0x0A { continue }
            }
            switch byte {
            case 0x0D:
                afterCR = true
                if let event = try endLine() { events.append(event) }
            case 0x0A:
                if let event = try endLine() { events.append(event) }
            default:
                guard line.count < maxEventBytes else { throw .eventTooLarge(limit: maxEventBytes) }
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() throws(SSEParserError) -> SSEEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if atStart {
            atStart = false
            // A byte order mark may open the stream.
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
        }
        if line.isEmpty { return dispatch() }
        if line[0] == UInt8(ascii: ":") { return nil }
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let name = line[..<(colon ?? line.endIndex)]
        var value = colon.map { line[($0 + 1)...] } ?? []
        if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        if name.elementsEqual("data".utf8) {
            if hasData { data.append(0x0A) }
            hasData = true
            guard data.count + value.count <= maxEventBytes else { throw .eventTooLarge(limit: maxEventBytes) }
            data.append(contentsOf: value)
        } else if name.elementsEqual("event".utf8) {
            eventType = String(decoding: value, as: UTF8.self)
        }
        return nil
    }

    private mutating func dispatch() -> SSEEvent? {
        defer {
            eventType = ""
            data.removeAll(keepingCapacity: true)
            hasData = false
        }
        guard hasData else { return nil }
        return SSEEvent(type: eventType.isEmpty ? "message" : eventType, data: String(decoding: data, as: UTF8.self))
    }
}
