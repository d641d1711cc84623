/// OpenSSH's escape grammar for keys typed into an interactive session: after a newline (or at
/// the very start), `~` and a character the caller gave an action to is that escape; `~~` sends
/// one `~`; `~` and any other character sends both. One grammar for every terminal Termhost
/// relays: `termhost ssh` (`~.` disconnects) and a terminal attached to a persistent session
/// in the daemon (`~d` detaches). Not thread-safe: one per terminal.
public struct TerminalEscapes<Action: Sendable>: Sendable {
    /// What an escape character does, and whether it ends the input (the rest is dropped).
    public struct Escape: Sendable {
        public let action: Action
        public let ends: Bool
        public init(_ action: Action, ends: Bool) {
            self.action = action
            self.ends = ends
        }
    }

    private let escapes: [UInt8: Escape]
    private var atLineStart = true
    private var sawTilde = false

    /// `escapes`: the character after `~` (ASCII) and what it does.
    public init(_ escapes: [Character: Escape]) {
        var table: [UInt8: Escape] = [:]
        for (c, e) in escapes { if let b = c.asciiValue { table[b] = e } }
        self.escapes = table
    }

    /// The bytes to send on, and the escape typed in `input` (the last one that did not end it,
    /// or the one that did).
    public mutating func filter(_ input: [UInt8]) -> (send: [UInt8], action: Action?) {
        var out: [UInt8] = []
        var action: Action? = nil
        for b in input {
            if sawTilde {
                sawTilde = false
                if let escape = escapes[b] {
                    if escape.ends { return (out, escape.action) }
                    action = escape.action
                    atLineStart = true
                    continue
                }
                if b == UInt8(ascii: "~") { out.append(b) } else { out += [UInt8(ascii: "~"), b] }
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
