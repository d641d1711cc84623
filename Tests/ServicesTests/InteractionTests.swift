import Foundation
import Testing
import TermhostServices

@Suite struct InteractionTests {
    func pipePair() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        pipe(&fds)
        return (fds[0], fds[1])
    }

    func send(_ fd: Int32, _ text: String) {
        let b = Array(text.utf8)
        _ = b.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    @Test func sceneWithoutTerminalFailsClosed() {
        let i = Interaction(nonInteractive: false)
        i.attach(scene: 1, terminal: nil)
        #expect(throws: Interaction.Failure.nonInteractive("cannot ask 'Password:': scene 1 has no terminal")) {
            try i.promptText(scene: 1, prompt: "Password:", echo: false)
        }
        #expect(throws: Interaction.Failure.nonInteractive("cannot ask 'Trust this host?': background work has no terminal to ask on")) {
            try i.confirm(scene: 0, question: "Trust this host?")
        }
    }

    @Test func nonInteractiveFailsClosedEvenWithATerminal() {
        let input = pipePair(), output = pipePair()
        let i = Interaction(nonInteractive: true)
        i.attach(scene: 1, terminal: .init(input: input.read, output: output.write))
        #expect(throws: Interaction.Failure.nonInteractive("cannot ask 'Trust?': termhost runs with --non-interactive")) {
            try i.confirm(scene: 1, question: "Trust?")
        }
    }

    @Test func promptsReadALineAndConfirmAcceptsOnlyYesOrNo() throws {
        let input = pipePair(), output = pipePair()
        defer { [input.read, input.write, output.read, output.write].forEach { close($0) } }
        let i = Interaction(nonInteractive: false)
        i.attach(scene: 3, terminal: .init(input: input.read, output: output.write))
        send(input.write, "alice\nmaybe\nyes\n2\n")
        #expect(try i.promptText(scene: 3, prompt: "User: ", echo: true) == "alice")
        #expect(try i.confirm(scene: 3, question: "Continue?") == true)
        #expect(try i.choose(scene: 3, prompt: "Pick", choices: ["once", "always"]) == 1)
        var buf = [UInt8](repeating: 0, count: 4096)
        let n = read(output.read, &buf, buf.count)
        let shown = String(decoding: buf[0..<max(n, 0)], as: UTF8.self)
        #expect(shown.contains("User: ") && shown.contains("Please type 'yes' or 'no'.") && shown.contains("  2) always"))
    }

    @Test func endOfInputCancelsThePrompt() {
        let input = pipePair(), output = pipePair()
        defer { [input.read, output.read, output.write].forEach { close($0) } }
        close(input.write)
        let i = Interaction(nonInteractive: false)
        i.attach(scene: 1, terminal: .init(input: input.read, output: output.write))
        #expect(throws: Interaction.Failure.cancelled) { try i.promptText(scene: 1, prompt: "x", echo: true) }
    }
}
