/// Remote text (process names, mount points, GPU names, error messages) on a terminal: no
/// control characters or escape sequences get through, and lines are cut by display columns.
public enum TerminalText {
    /// Control characters (C0, DEL, C1, which includes the 8-bit CSI) and bidirectional
    /// overrides become "?": a process named "\u{1b}[2J" cannot clear or rewrite the screen.
    public static func clean(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: isUnsafe) else { return s }
        return String(String.UnicodeScalarView(s.unicodeScalars.map { isUnsafe($0) ? "?" : $0 }))
    }

    static func isUnsafe(_ u: Unicode.Scalar) -> Bool {
        let v = u.value
        return v < 0x20 || (0x7f...0x9f).contains(v) || (0x202a...0x202e).contains(v) || (0x2066...0x2069).contains(v)
    }

    /// Columns a character takes: 2 for East Asian wide and full-width characters and most
    /// emoji, 0 for zero-width ones, else 1 (a grapheme's combining marks add nothing).
    public static func columns(_ c: Character) -> Int {
        guard let u = c.unicodeScalars.first else { return 0 }
        let v = u.value
        if v == 0x200b || v == 0x200c || v == 0x200d || v == 0xfeff { return 0 }
        switch u.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        let wide: [ClosedRange<UInt32>] = [0x1100...0x115f, 0x2e80...0x303e, 0x3041...0x33ff, 0x3400...0x4dbf, 0x4e00...0x9fff,
                                           0xa000...0xa4cf, 0xac00...0xd7a3, 0xf900...0xfaff, 0xfe30...0xfe4f, 0xff00...0xff60,
                                           0xffe0...0xffe6, 0x1f300...0x1f64f, 0x1f900...0x1f9ff, 0x20000...0x3fffd]
        return wide.contains { $0.contains(v) } ? 2 : 1
    }

    public static func columns(_ s: String) -> Int { s.reduce(0) { $0 + columns($1) } }

    /// s cut to at most `width` display columns (a wide character that would not fit is left out).
    public static func fit(_ s: String, _ width: Int) -> String {
        var used = 0
        var out = ""
        for c in s {
            let w = columns(c)
            if used + w > width { break }
            used += w
            out.append(c)
        }
        return out
    }
}
