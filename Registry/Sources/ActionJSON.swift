/// A strict JSON reader for typed actions' arguments and results (RFC 8259), which keeps each
/// number's text: an int64 or uint64 argument must arrive exact, and JSONValue's Double cannot
/// hold 2^63 - 1. Untrusted input: nesting is bounded, strings must be UTF-8 with paired
/// surrogates, and nothing after the value is allowed but whitespace.
public indirect enum ActionJSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(String)
    case string([UInt8])
    case array([ActionJSON])
    case object([(String, ActionJSON)])

    public static func == (a: ActionJSON, b: ActionJSON) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    public static let maxDepth = 64

    /// Parses `bytes` as one JSON value; the error says what is wrong and at which byte.
    public static func parse(_ bytes: [UInt8]) throws(ActionArgumentError) -> ActionJSON {
        guard String(validating: bytes, as: UTF8.self) != nil else { throw ActionArgumentError("it is not UTF-8") }
        var reader = Reader(bytes: bytes)
        reader.skipSpace()
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.at == bytes.count else { throw reader.fail("unexpected text after the value") }
        return value
    }

    /// Compact JSON text; strings escape every control character, DEL and C1 ones included, so
    /// the text is safe to print on a terminal.
    public var text: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return n
        case .string(let s): return ActionJSON.quote(s)
        case .array(let a): return "[" + a.map(\.text).joined(separator: ",") + "]"
        case .object(let o): return "{" + o.map { ActionJSON.quote(Array($0.0.utf8)) + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }

    /// A JSON string of UTF-8 bytes (invalid sequences become U+FFFD).
    public static func quote(_ bytes: [UInt8]) -> String {
        var out = "\""
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    struct Reader {
        let bytes: [UInt8]
        var at = 0

        func fail(_ what: String) -> ActionArgumentError { ActionArgumentError("\(what) at byte \(at)") }

        mutating func skipSpace() {
            while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
        }

        mutating func literal(_ word: String, _ value: ActionJSON) throws(ActionArgumentError) -> ActionJSON {
            let w = Array(word.utf8)
            guard at + w.count <= bytes.count, Array(bytes[at..<at + w.count]) == w else { throw fail("invalid literal") }
            at += w.count
            return value
        }

        mutating func value(depth: Int) throws(ActionArgumentError) -> ActionJSON {
            guard depth < ActionJSON.maxDepth else { throw fail("nested more than \(ActionJSON.maxDepth) deep") }
            guard at < bytes.count else { throw fail("unexpected end") }
            switch bytes[at] {
            case UInt8(ascii: "n"): return try literal("null", .null)
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "["):
                at += 1
                var items: [ActionJSON] = []
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "]") { at += 1; return .array(items) }
                while true {
                    skipSpace()
                    items.append(try value(depth: depth + 1))
                    skipSpace()
                    guard at < bytes.count else { throw fail("unexpected end in an array") }
                    if bytes[at] == UInt8(ascii: "]") { at += 1; return .array(items) }
                    guard bytes[at] == UInt8(ascii: ",") else { throw fail("expected ',' or ']'") }
                    at += 1
                }
            case UInt8(ascii: "{"):
                at += 1
                var members: [(String, ActionJSON)] = []
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "}") { at += 1; return .object(members) }
                while true {
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw fail("expected a key") }
                    let key = String(decoding: try string(), as: UTF8.self)
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                    at += 1
                    skipSpace()
                    members.append((key, try value(depth: depth + 1)))
                    skipSpace()
                    guard at < bytes.count else { throw fail("unexpected end in an object") }
                    if bytes[at] == UInt8(ascii: "}") { at += 1; return .object(members) }
                    guard bytes[at] == UInt8(ascii: ",") else { throw fail("expected ',' or '}'") }
                    at += 1
                }
            default: return .number(try number())
            }
        }

        mutating func number() throws(ActionArgumentError) -> String {
            let start = at
            func digits() -> Int {
                let s = at
                while at < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[at]) { at += 1 }
                return at - s
            }
            if at < bytes.count, bytes[at] == UInt8(ascii: "-") { at += 1 }
            let intStart = at
            guard digits() > 0 else { throw fail("invalid value") }
            if bytes[intStart] == UInt8(ascii: "0"), at - intStart > 1 { throw fail("a number with a leading zero") }
            if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
                at += 1
                guard digits() > 0 else { throw fail("a digit must follow '.'") }
            }
            if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
                at += 1
                if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
                guard digits() > 0 else { throw fail("a digit must follow the exponent") }
            }
            return String(decoding: bytes[start..<at], as: UTF8.self)
        }

        mutating func hex4() throws(ActionArgumentError) -> UInt32 {
            guard at + 4 <= bytes.count, let v = UInt32(String(decoding: bytes[at..<at + 4], as: UTF8.self), radix: 16) else {
                throw fail("invalid \\u escape")
            }
            at += 4
            return v
        }

        mutating func string() throws(ActionArgumentError) -> [UInt8] {
            at += 1
            var out: [UInt8] = []
            while at < bytes.count {
                let b = bytes[at]
                at += 1
                if b == UInt8(ascii: "\"") { return out }
                guard b >= 0x20 else { throw fail("a raw control character in a string") }
                guard b == UInt8(ascii: "\\") else { out.append(b); continue }
                guard at < bytes.count else { break }
                let e = bytes[at]
                at += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "b"): out.append(8)
                case UInt8(ascii: "f"): out.append(12)
                case UInt8(ascii: "n"): out.append(10)
                case UInt8(ascii: "r"): out.append(13)
                case UInt8(ascii: "t"): out.append(9)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard at + 2 <= bytes.count, bytes[at] == UInt8(ascii: "\\"), bytes[at + 1] == UInt8(ascii: "u") else {
                            throw fail("an unpaired surrogate in a \\u escape")
                        }
                        at += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("an unpaired surrogate in a \\u escape") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(code) {
                        throw fail("an unpaired surrogate in a \\u escape")
                    }
                    out += Array(String(Unicode.Scalar(code)!).utf8)
                default: throw fail("invalid escape")
                }
            }
            throw fail("unterminated string")
        }
    }
}
