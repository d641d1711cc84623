/// Finds what a session's output says about the session, for its events (ssh/sessions.h): a
/// window title set with OSC 0 or 2 (`ESC ] 2 ; TITLE BEL` or `... ESC \`) and a bell (BEL
/// outside an OSC string). The output is the remote's: a title is bounded to 256 bytes before
/// it is kept and made visible (`visibleTitle`), and the scanner keeps its state across
/// chunks, so a sequence split between two reads is still seen once.
struct TerminalEventScanner {
    enum Found: Equatable { case title(String), bell }

    /// The longest OSC string kept; the rest of a longer one is read and dropped.
    static let maxTitleBytes = 256

    private enum State { case ground, escape, oscNumber, oscText, oscEscape, oscSkip }
    private var state = State.ground
    private var number: [UInt8] = []
    private var text: [UInt8] = []
    /// Whether the OSC string being read is a title (OSC 0 or 2), to be reported at its end.
    private var isTitle = false

    mutating func scan(_ bytes: UnsafeRawBufferPointer) -> [Found] {
        var found: [Found] = []
        for b in bytes {
            switch state {
            case .ground:
                if b == 0x1B { state = .escape } else if b == 0x07 { found.append(.bell) }
            case .escape:
                if b == UInt8(ascii: "]") { state = .oscNumber; number = []; text = []; isTitle = false }
                else if b == 0x1B { state = .escape }
                else { state = .ground; if b == 0x07 { found.append(.bell) } }
            case .oscNumber:
                if b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") && number.count < 5 { number.append(b) }
                else if b == UInt8(ascii: ";") {
                    isTitle = number == [0x30] || number == [0x32]
                    state = isTitle ? .oscText : .oscSkip
                }
                else { end(b, &found) }
            case .oscText:
                if b == 0x07 || b == 0x1B || b == 0x18 || b == 0x1A { finish(b, &found); continue }
                if text.count < TerminalEventScanner.maxTitleBytes { text.append(b) }
            case .oscSkip:
                if b == 0x07 || b == 0x1B || b == 0x18 || b == 0x1A { end(b, &found) }
            case .oscEscape:
                // ESC \ ends the string; ESC then anything else abandons it (as xterm does).
                state = .ground
                if b == UInt8(ascii: "\\"), isTitle { found.append(.title(TerminalEventScanner.visibleTitle(text))) }
                else if b == 0x1B { state = .escape }
                text = []
                isTitle = false
            }
        }
        return found
    }

    /// An OSC 0/2 string's terminator: BEL ends it, ESC may start ST, CAN and SUB abandon it.
    private mutating func finish(_ b: UInt8, _ found: inout [Found]) {
        switch b {
        case 0x07:
            found.append(.title(TerminalEventScanner.visibleTitle(text)))
            state = .ground
            text = []
        case 0x1B: state = .oscEscape
        default:
            state = .ground
            text = []
            isTitle = false
        }
    }

    /// The end of an OSC string this scanner does not keep.
    private mutating func end(_ b: UInt8, _ found: inout [Found]) {
        text = []
        isTitle = false
        state = b == 0x1B ? .oscEscape : .ground
    }

    /// The title as text safe to show anywhere: invalid UTF-8 replaced, and control, bidi
    /// override and zero-width characters written as \u{...} escapes, so a title can neither
    /// move a cursor nor make itself read as something else.
    static func visibleTitle(_ bytes: [UInt8]) -> String {
        var out = ""
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            let v = scalar.value
            let hidden = v < 0x20 || (0x7F...0x9F).contains(v) || (0x200B...0x200F).contains(v)
                || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v) || v == 0xFEFF
            if hidden { out += "\\u{" + String(v, radix: 16) + "}" } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }
}
