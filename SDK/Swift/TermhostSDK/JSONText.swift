/// JSON string literals, written by hand wherever a plugin or the host builds JSON text.
///
/// Escapes what RFC 8259 requires (quotation mark, backslash, U+0000 to U+001F: newline, carriage
/// return and tab in their short forms, the rest as `\u00XX`) and, like `VisibleText`, DEL, the
/// C1 controls and the bidirectional overrides and isolates as `\uXXXX` too: the text stays the
/// same JSON string, but a script that prints a decoded value is not the one that must make it
/// safe. Everything else, non-ASCII included, is written as it is (UTF-8).
///
/// This file uses nothing but the standard library (and `VisibleText`), so fuzz targets compile it as it is.
public enum JSONText {
    /// `s` as a JSON string literal, quotation marks included.
    public static func quoted(_ s: String) -> String {
        var out = ""
        quote(s, into: &out)
        return out
    }

    /// Appends `s` as a JSON string literal to `out`.
    public static func quote(_ s: String, into out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where VisibleText.isUnsafe(u):
                // Every unsafe scalar is in the Basic Multilingual Plane: one \u escape each.
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(u)
            }
        }
        out += "\""
    }
}
