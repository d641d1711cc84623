/// A window of lines of a remote text file, for sftp_read: fed the file's bytes in order, it
/// keeps lines [offset, offset + maxLines), at most maxBytes of them, and says where the next
/// window starts. The file is the server's, so any bytes may come.
///
/// Design: lines are counted from the start of the file (a line ends with "\n"; a last line
/// without one still counts). Text means UTF-8 without NUL: a NUL byte or an invalid sequence
/// anywhere in what was read makes the file binary and the read is refused, so a model never
/// gets replacement characters it could take for the file's content. A window is full after
/// maxLines lines, or when the next line would pass maxBytes (that line starts the next
/// window); a first line longer than maxBytes alone is cut at a character boundary, and the
/// result says so. The caller stops reading once `isFull`: the total is then unknown.
///
/// This file uses nothing but the standard library, so the fuzz target
/// Tests/Fuzz/LineWindowFuzz.swift compiles it as it is.
struct LineWindow {
    struct Binary: Error, Equatable {
        /// Byte offset in the file of the first byte that is not text.
        let at: UInt64
        let reason: String
    }

    let offset: Int
    let maxLines: Int
    let maxBytes: Int

    /// The window's lines, without their "\n".
    private(set) var lines: [String] = []
    /// Lines ended so far (all of the file's once `finish()` ran without the window filling).
    private(set) var linesSeen = 0
    /// The window has all it can take: later lines belong to the next one.
    private(set) var isFull = false
    /// The window's only line was longer than maxBytes and was cut.
    private(set) var cutLine = false

    private var current: [UInt8] = []
    private var currentTooLong = false
    /// The line being read has bytes (kept or not: lines before the window are only counted).
    private var currentStarted = false
    private var windowBytes = 0
    /// Bytes of a UTF-8 sequence split across two feeds.
    private var carry: [UInt8] = []
    private var position: UInt64 = 0

    init(offset: Int, maxLines: Int, maxBytes: Int) {
        self.offset = max(0, offset)
        self.maxLines = max(1, maxLines)
        self.maxBytes = max(4, maxBytes)
    }

    /// The next bytes of the file.
    mutating func feed(_ chunk: [UInt8]) throws(Binary) {
        guard !isFull else { return }
        let bytes = carry + chunk
        let start = position - UInt64(carry.count)
        let tail = LineWindow.incompleteTail(bytes)
        let whole = bytes[..<(bytes.count - tail)]
        try LineWindow.checkText(whole, at: start)
        carry = Array(bytes[(bytes.count - tail)...])
        position += UInt64(chunk.count)
        var lineStart = whole.startIndex
        for i in whole.indices where whole[i] == 0x0A {
            take(whole[lineStart..<i])
            endLine()
            lineStart = i + 1
            if isFull { return }
        }
        take(whole[lineStart...])
    }

    /// End of file: a last line without "\n" counts.
    mutating func finish() throws(Binary) {
        guard !isFull else { return }
        if !carry.isEmpty {
            throw Binary(at: position - UInt64(carry.count), reason: "the file ends inside a UTF-8 sequence")
        }
        if currentStarted { endLine() }
    }

    /// Where the next window starts, nil when the file ended inside this one.
    var nextOffset: Int? { isFull ? offset + lines.count : nil }

    private var inWindow: Bool { linesSeen >= offset }

    private mutating func take(_ part: ArraySlice<UInt8>) {
        if !part.isEmpty { currentStarted = true }
        guard inWindow, !part.isEmpty else { return }
        let room = maxBytes - current.count
        if part.count <= room {
            current += part
        } else {
            current += part.prefix(max(0, room))
            currentTooLong = true
        }
    }

    private mutating func endLine() {
        defer {
            linesSeen += 1
            current = []
            currentTooLong = false
            currentStarted = false
        }
        guard inWindow else { return }
        let size = current.count + 1
        if currentTooLong || windowBytes + size > maxBytes {
            if lines.isEmpty {
                // Alone and too long: cut at a character boundary.
                let cut = current.count - LineWindow.incompleteTail(current)
                lines.append(String(decoding: current[..<cut], as: UTF8.self))
                cutLine = currentTooLong
            }
            isFull = true
            return
        }
        lines.append(String(decoding: current, as: UTF8.self))
        windowBytes += size
        if lines.count == maxLines { isFull = true }
    }

    /// Bytes at the end of `bytes` that begin a UTF-8 sequence not yet complete (0 to 3).
    static func incompleteTail<C: RandomAccessCollection>(_ bytes: C) -> Int where C.Element == UInt8, C.Index == Int {
        var back = 0
        var i = bytes.endIndex
        while i > bytes.startIndex && back < 3 {
            let b = bytes[i - 1]
            if b & 0xC0 == 0x80 { back += 1; i -= 1; continue }
            let length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1
            return length > back + 1 ? back + 1 : 0
        }
        return 0
    }

    private static func checkText(_ bytes: ArraySlice<UInt8>, at start: UInt64) throws(Binary) {
        var parser = Unicode.UTF8.ForwardParser()
        var input = bytes.makeIterator()
        var at = start
        while true {
            switch parser.parseScalar(from: &input) {
            case .valid(let scalar):
                if scalar.count == 1 && scalar.first == 0 { throw Binary(at: at, reason: "it contains a NUL byte") }
                at += UInt64(scalar.count)
            case .error:
                throw Binary(at: at, reason: "it is not UTF-8")
            case .emptyInput:
                return
            }
        }
    }
}
