import Testing
import TermhostSDK

/// OpenSSH's escape grammar, shared by `termhost ssh` and an attached terminal.
@Suite struct TerminalEscapesTests {
    enum Action: Sendable, Equatable { case help, leave }
    func escapes() -> TerminalEscapes<Action> {
        TerminalEscapes([".": .init(.leave, ends: true), "?": .init(.help, ends: false)])
    }
    func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    @Test func anEscapeCountsOnlyAfterANewlineOrAtTheStart() {
        var e = escapes()
        #expect(e.filter(bytes("a~.b")) == (bytes("a~.b"), nil))
        #expect(e.filter(bytes("\r~.rest")) == (bytes("\r"), .leave), "an ending escape drops what follows")
        var f = escapes()
        #expect(f.filter(bytes("~?ls\n")) == (bytes("ls\n"), .help), "help does not end the input")
        #expect(f.filter(bytes("~~x\n~q")) == (bytes("~x\n~q"), nil), "~~ sends one ~, an unknown escape both")
    }

    @Test func aTildeSplitFromItsCharacterAcrossReadsIsStillAnEscape() {
        var e = escapes()
        #expect(e.filter(bytes("~")) == ([], nil))
        #expect(e.filter(bytes(".")) == ([], .leave))
    }
}
