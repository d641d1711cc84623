import Foundation
import Testing
import TestSupport

/// `-t`, `-tt` and `-T` with OpenSSH's meaning, against the test's sshd: `tty` on the server says
/// whether the command got a terminal.
@Suite struct TerminalRequestEndToEndTests {
    static let warning = "Pseudo-terminal will not be allocated because stdin is not a terminal."

    @Test func onATerminalDashTGivesACommandARemoteTerminal() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        // Without -t a command gets none, as `ssh HOST COMMAND`.
        let plain = try TmuxSession(command: [Paths.termhost, "ssh", h.target, "tty"], environment: h.environment, width: 200)
        defer { plain.close() }
        let plainScreen = plain.waitFor("[exit")
        #expect(plainScreen.contains("not a tty") && plainScreen.contains("[exit 1]"), "\(plainScreen)")
        for command in [["ssh", "-t", h.target, "tty"], ["exec", "-t", h.target, "--", "tty"]] {
            let forced = try TmuxSession(command: [Paths.termhost] + command, environment: h.environment, width: 200)
            defer { forced.close() }
            let screen = forced.waitFor("[exit")
            #expect(screen.contains("/dev/pts/") && screen.contains("[exit 0]"), "\(command): \(screen)")
        }
    }

    @Test func withoutALocalTerminalDashTWarnsDashTTForcesAndTheLastOfTAndTWins() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let once = try h.termhost(["ssh", "-t", h.target, "tty"])
        #expect(once.stdout == "not a tty\n" && once.stderr.contains(Self.warning), "\(once.output)")
        for twice in [["ssh", "-tt", h.target, "tty"], ["ssh", "-t", "-t", h.target, "tty"], ["exec", "-tt", h.target, "--", "tty"]] {
            let forced = try h.termhost(twice)
            #expect(forced.status == 0 && forced.stdout.contains("/dev/pts/") && !forced.stderr.contains(Self.warning), "\(twice): \(forced.output)")
        }
        // -T: a shell without a terminal, and no warning for it.
        let shell = try h.termhost(["ssh", "-T", h.target], stdin: "tty\n")
        #expect(shell.stdout == "not a tty\n" && !shell.stderr.contains(Self.warning), "\(shell.output)")
        let lastWins = try h.termhost(["ssh", "-tt", "-T", h.target, "tty"])
        #expect(lastWins.stdout == "not a tty\n", "\(lastWins.output)")
        let withoutT = try h.termhost(["ssh", h.target], stdin: "tty\n")
        #expect(withoutT.stdout == "not a tty\n" && withoutT.stderr.contains(Self.warning), "a shell's warning is as before: \(withoutT.output)")
    }
}
