/// Text from outside (a server's prompt or banner, a remote file name, a host name from a config
/// file, a SOCKS destination) on its way to a terminal or a log line: every control character is
/// shown, never obeyed.
///
/// Design: OpenSSH passes such text through `strvis(VIS_OCTAL)` before printing it, so an escape
/// sequence reads as `\033[2J` instead of clearing the screen. We do the same for C0 controls
/// (newline and tab included, so a name with a newline cannot fake a second line of output),
/// DEL, the C1 controls (which include the 8-bit CSI), and the bidirectional overrides and
/// isolates (which can make a name read backwards). A backslash stays a backslash: it moves no
/// cursor, and doubling it would make ordinary Windows paths unreadable.
///
/// This file uses nothing but the standard library, so fuzz targets compile it as it is.
public enum VisibleText {
    /// `s` with every unsafe scalar written as a backslash and three octal digits of each of its
    /// UTF-8 bytes (ESC is `\033`, a newline `\012`, U+202E `\342\200\256`).
    public static func of(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: isUnsafe) else { return s }
        var out = ""
        out.reserveCapacity(s.utf8.count + 8)
        for u in s.unicodeScalars {
            if isUnsafe(u) {
                for byte in String(u).utf8 { out += octal(byte) }
            } else {
                out.unicodeScalars.append(u)
            }
        }
        return out
    }

    /// Bytes that may not be UTF-8 (a file name, a line of a file): valid UTF-8 is shown as by
    /// `of(_:)`, and every byte that is not part of a valid sequence is written as `\ooo`.
    public static func of<Bytes: Collection>(bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let a = Array(bytes)
        var out = ""
        var i = 0
        while i < a.count {
            let b = a[i]
            let length = b < 0x80 ? 1 : (0xc2...0xdf).contains(b) ? 2 : (0xe0...0xef).contains(b) ? 3
                : (0xf0...0xf4).contains(b) ? 4 : 0
            if length > 0, i + length <= a.count,
               let scalar = String(validating: a[i..<(i + length)], as: UTF8.self) {
                out += of(scalar)
                i += length
            } else {
                out += octal(b)
                i += 1
            }
        }
        return out
    }

    /// Whether `s` holds anything `of(_:)` would rewrite.
    public static func isPlain(_ s: String) -> Bool {
        !s.unicodeScalars.contains(where: isUnsafe)
    }

    /// C0 controls, DEL, C1 controls, and the bidirectional embeddings, overrides and isolates.
    public static func isUnsafe(_ u: Unicode.Scalar) -> Bool {
        let v = u.value
        return v < 0x20 || (0x7f...0x9f).contains(v) || (0x202a...0x202e).contains(v)
            || (0x2066...0x2069).contains(v)
    }

    private static func octal(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 8)
        return "\\" + String(repeating: "0", count: 3 - digits.count) + digits
    }
}
