/// An attached terminal's escapes, after a newline or at the start, in ssh's grammar: `~d`
/// and `~.` detach, `~?` lists them, `~~` sends one `~`. The daemon applies them to a terminal
/// a client passed; a client that relays its terminal itself applies them there.
public struct DetachEscape: Sendable {
    public enum Action: Sendable { case help, detach }
    private var atLineStart = true
    private var sawTilde = false

    public static let help = "\r\nSupported escape sequences:\r\n ~d   - detach (the session goes on)\r\n ~.   - detach, as ~d\r\n ~?   - this message\r\n ~~   - send the escape character by typing it twice\r\n(Note that escapes are only recognized immediately after newline.)\r\n"

    public init() {}

    public mutating func filter(_ input: [UInt8]) -> (send: [UInt8], action: Action?) {
        var out: [UInt8] = []
        var action: Action? = nil
        for b in input {
            if sawTilde {
                sawTilde = false
                switch b {
                case UInt8(ascii: "d"), UInt8(ascii: "."): return (out, .detach)
                case UInt8(ascii: "?"):
                    action = .help
                    atLineStart = true
                    continue
                case UInt8(ascii: "~"): out.append(b)
                default: out += [UInt8(ascii: "~"), b]
                }
            } else if atLineStart && b == UInt8(ascii: "~") {
                sawTilde = true
                continue
            } else {
                out.append(b)
            }
            atLineStart = b == UInt8(ascii: "\r") || b == UInt8(ascii: "\n")
        }
        return (out, action)
    }
}

