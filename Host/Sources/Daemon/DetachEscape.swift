import TermhostSDK

/// An attached terminal's escapes (TerminalEscapes, ssh's grammar): `~d` and `~.` detach,
/// `~?` lists them, `~~` sends one `~`. The daemon applies them to a terminal a client passed;
/// a client that relays its terminal itself applies them there.
public enum DetachEscape {
    public enum Action: Sendable { case help, detach }

    public static func filter() -> TerminalEscapes<Action> {
        TerminalEscapes(["d": .init(.detach, ends: true), ".": .init(.detach, ends: true), "?": .init(.help, ends: false)])
    }

    public static let help = "\r\nSupported escape sequences:\r\n ~d   - detach (the session goes on)\r\n ~.   - detach, as ~d\r\n ~?   - this message\r\n ~~   - send the escape character by typing it twice\r\n(Note that escapes are only recognized immediately after newline.)\r\n"
}
