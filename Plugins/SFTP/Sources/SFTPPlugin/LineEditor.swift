import Glibc

/// Reads command lines with editing and history when stdin is a terminal (left/right, Home/End,
/// Ctrl-A/E/U/K/W, Backspace/Delete, Up/Down through history, Ctrl-C clears, Ctrl-D on an empty
/// line ends); plain lines otherwise, so `termhost sftp HOST < script` works like sftp -b.
final class LineEditor {
    let input: Int32, output: Int32
    private(set) var history: [String] = []
    private let interactive: Bool

    init(input: Int32, output: Int32) {
        self.input = input
        self.output = output
        interactive = isatty(input) == 1
    }

    /// The next line, nil at end of input.
    func read(prompt: String) -> String? {
        interactive ? readEdited(prompt) : readPlain()
    }

    private var pending: [UInt8] = []
    private func byte() -> UInt8? {
        if !pending.isEmpty { return pending.removeFirst() }
        var buf = [UInt8](repeating: 0, count: 256)
        while true {
            let n = Glibc.read(input, &buf, buf.count)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return nil }
            pending = Array(buf[1..<n])
            return buf[0]
        }
    }

    private func readPlain() -> String? {
        var line: [UInt8] = []
        while let b = byte() {
            if b == 10 { return String(decoding: line, as: UTF8.self) }
            line.append(b)
        }
        return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
    }

    private func readEdited(_ prompt: String) -> String? {
        var saved = termios()
        tcgetattr(input, &saved)
        var raw = saved
        // ISIG off while editing: Ctrl-C clears the line instead of ending termhost.
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG)
        tcsetattr(input, TCSANOW, &raw)
        defer { tcsetattr(input, TCSANOW, &saved) }

        var line: [Character] = []
        var cursor = 0
        var historyIndex = history.count
        var utf8: [UInt8] = []
        func redraw() {
            let text = String(line)
            let back = line.count - cursor
            emit("\r\u{1B}[K\(prompt)\(text)" + (back > 0 ? "\u{1B}[\(back)D" : ""))
        }
        redraw()
        while let b = byte() {
            switch b {
            case 13, 10:
                emit("\r\n")
                let text = String(line)
                if text.contains(where: { $0 != " " }), history.last != text { history.append(text) }
                return text
            case 4:  // Ctrl-D
                if line.isEmpty { emit("\r\n"); return nil }
                if cursor < line.count { line.remove(at: cursor) }
            case 3: line = []; cursor = 0; emit("^C\r\n")                  // Ctrl-C
            case 1: cursor = 0                                             // Ctrl-A
            case 5: cursor = line.count                                    // Ctrl-E
            case 21: line.removeFirst(cursor); cursor = 0                  // Ctrl-U
            case 11: line.removeLast(line.count - cursor)                  // Ctrl-K
            case 23:                                                       // Ctrl-W
                var start = cursor
                while start > 0, line[start - 1] == " " { start -= 1 }
                while start > 0, line[start - 1] != " " { start -= 1 }
                line.removeSubrange(start..<cursor)
                cursor = start
            case 127, 8: if cursor > 0 { line.remove(at: cursor - 1); cursor -= 1 }
            case 27:
                let introducer = byte()
                guard introducer == UInt8(ascii: "[") || introducer == UInt8(ascii: "O"), let code = byte() else { break }
                switch code {
                case UInt8(ascii: "A"), UInt8(ascii: "B"):
                    let step = code == UInt8(ascii: "A") ? -1 : 1
                    let target = historyIndex + step
                    guard target >= 0, target <= history.count else { break }
                    historyIndex = target
                    line = target == history.count ? [] : Array(history[target])
                    cursor = line.count
                case UInt8(ascii: "C"): cursor = min(cursor + 1, line.count)
                case UInt8(ascii: "D"): cursor = max(cursor - 1, 0)
                case UInt8(ascii: "H"): cursor = 0
                case UInt8(ascii: "F"): cursor = line.count
                case UInt8(ascii: "3"): if byte() == UInt8(ascii: "~"), cursor < line.count { line.remove(at: cursor) }
                case UInt8(ascii: "1"), UInt8(ascii: "7"): if byte() == UInt8(ascii: "~") { cursor = 0 }          // Home
                case UInt8(ascii: "4"), UInt8(ascii: "8"): if byte() == UInt8(ascii: "~") { cursor = line.count } // End
                default: break
                }
            default:
                guard b >= 32 else { break }
                utf8.append(b)
                // Insert once a whole UTF-8 character has arrived.
                let expected = b < 0x80 ? 1 : utf8[0] >= 0xF0 ? 4 : utf8[0] >= 0xE0 ? 3 : 2
                if utf8.count >= expected || b < 0x80 {
                    for ch in String(decoding: utf8, as: UTF8.self) { line.insert(ch, at: cursor); cursor += 1 }
                    utf8 = []
                }
            }
            redraw()
        }
        return nil
    }

    private func emit(_ s: String) {
        let bytes = Array(s.utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { Glibc.write(output, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return }
            done += n
        }
    }
}
