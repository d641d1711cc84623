/// Finds the commands a remote shell reports through shell integration, in the terminal's
/// output stream, without changing it: the `OSC 633 ; E ; <command line>` sequence (ended by
/// BEL or ST) that VS Code's and other terminals' shell integration scripts emit, with its
/// escapes (`\\` for a backslash, `\xNN` for a byte). Sequences split across reads are kept
/// until complete (up to 8 KiB; a longer one is dropped).
struct ShellIntegration {
    private var carry: [UInt8] = []
    static let start: [UInt8] = Array("\u{1B}]633;E;".utf8)

    mutating func scan(_ chunk: UnsafeRawBufferPointer) -> [String] {
        var data = carry + chunk
        carry = []
        var commands: [String] = []
        var searchFrom = 0
        while let s = ShellIntegration.find(ShellIntegration.start, in: data, from: searchFrom) {
            let body = s + ShellIntegration.start.count
            guard let end = data[body...].firstIndex(where: { $0 == 0x07 || $0 == 0x1B }) else {
                if data.count - s < 8192 { carry = Array(data[s...]) }
                return commands
            }
            if data[end] == 0x1B && end + 1 >= data.count {   // ESC of an ST not yet arrived
                carry = Array(data[s...])
                return commands
            }
            // "E;<command line>;<nonce>": the command line's own ';' are escaped (\x3b), so the
            // first raw ';' starts the nonce, which is not part of the command.
            var field = Array(data[body..<end])
            if let semicolon = field.firstIndex(of: UInt8(ascii: ";")) { field = Array(field[..<semicolon]) }
            let text = ShellIntegration.unescape(field)
            if !text.trimmingCharacters(in: .whitespaces).isEmpty { commands.append(text) }
            searchFrom = end + 1
        }
        // Keep a partial start marker at the very end.
        let tail = data.suffix(ShellIntegration.start.count - 1)
        for n in stride(from: tail.count, to: 0, by: -1) where Array(tail.suffix(n)) == Array(ShellIntegration.start.prefix(n)) {
            carry = Array(tail.suffix(n))
            break
        }
        data = []
        return commands
    }

    static func find(_ needle: [UInt8], in hay: [UInt8], from: Int) -> Int? {
        guard hay.count >= needle.count, from <= hay.count - needle.count else { return nil }
        for i in from...(hay.count - needle.count) where hay[i] == needle[0] && Array(hay[i..<(i + needle.count)]) == needle {
            return i
        }
        return nil
    }

    static func unescape(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "\\"), i + 1 < bytes.count {
                if bytes[i + 1] == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")); i += 2; continue }
                if bytes[i + 1] == UInt8(ascii: "x"), i + 3 < bytes.count,
                   let v = UInt8(String(decoding: bytes[(i + 2)...(i + 3)], as: UTF8.self), radix: 16) {
                    out.append(v); i += 4; continue
                }
            }
            out.append(bytes[i])
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}

import Foundation
