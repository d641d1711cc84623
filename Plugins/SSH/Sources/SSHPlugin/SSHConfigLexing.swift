/// The lexical rules of ssh_config, as OpenSSH's readconf applies them: how a line's values
/// are split and quoted, and how a Host pattern matches a name. Kept apart from the parser's
/// reading and resolving so each can be read alone; the fuzz target compiles both files.
extension SSHConfigParser {
    struct ArgumentError: Error { let message: String }

    /// The values after the keyword: separated by white space, with "double" or 'single'
    /// quotes around values that hold spaces, a backslash before a quote or backslash taking it
    /// as it is, and an unquoted `#` starting a comment.
    static func arguments(_ text: ArraySlice<UInt8>) -> Result<[String], ArgumentError> {
        var args: [String] = []
        var i = text.startIndex
        while true {
            while i < text.endIndex && isSpace(text[i]) { i += 1 }
            if i == text.endIndex || text[i] == UInt8(ascii: "#") { break }
            var token: [UInt8] = []
            var quote: UInt8? = nil
            while i < text.endIndex {
                let b = text[i]
                if quote == nil && isSpace(b) { break }
                if b == UInt8(ascii: "\\"), i + 1 < text.endIndex,
                   [UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "'")].contains(text[i + 1]) {
                    token.append(text[i + 1])
                    i += 2
                    continue
                }
                if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
                    if quote == nil { quote = b; i += 1; continue }
                    if quote == b { quote = nil; i += 1; continue }
                }
                token.append(b)
                i += 1
            }
            if let q = quote { return .failure(ArgumentError(message: "an unterminated quote (\(q == UInt8(ascii: "\"") ? "\"" : "'"))")) }
            args.append(String(decoding: token, as: UTF8.self))
        }
        return .success(args)
    }

    /// OpenSSH's pattern: `*` any run of bytes, `?` one byte, anything else itself. Iterative,
    /// going back only to the last `*`, so a hostile pattern costs at most pattern × name steps.
    static func glob(_ pattern: [UInt8], _ name: [UInt8]) -> Bool {
        var p = 0, n = 0
        var star = -1, resume = 0
        while n < name.count {
            if p < pattern.count && (pattern[p] == UInt8(ascii: "?") || pattern[p] == name[n]) && pattern[p] != UInt8(ascii: "*") {
                p += 1; n += 1
            } else if p < pattern.count && pattern[p] == UInt8(ascii: "*") {
                star = p; resume = n; p += 1
            } else if star >= 0 {
                p = star + 1; resume += 1; n = resume
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.count
    }
}
