import Foundation
import Testing
import TestSupport

/// `termhost ssh HOST` in a real terminal (tmux), against a real sshd.
@Suite struct TerminalEndToEndTests {
    /// Runs termhost in a shell that afterwards reports whether the terminal is back in
    /// canonical mode ("icanon" restored, "-icanon" still raw) and the exit status.
    func session(_ h: SSHHarness, _ args: [String]) throws -> TmuxSession {
        let command = ([Paths.termhost] + args).map { "'\($0)'" }.joined(separator: " ")
        return try TmuxSession(command: ["/bin/sh", "-c", "\(command); s=$?; stty -a | tr ' ' '\\n' | grep -x -- '-*icanon'; exit $s"],
                               environment: h.environment)
    }

    @Test func typeACommandReadItsOutputResizeAndDisconnectWithTildeDot() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let tty = try session(h, ["ssh", h.target])
        defer { tty.close() }
        tty.type("echo ready-$((6*7))")
        #expect(tty.waitFor("ready-42").contains("ready-42"))
        tty.resize(columns: 100, rows: 40)
        // The window change travels beside the typed text, not in order with it: ask again
        // until the remote PTY reports the new size.
        #expect(Wait.until(poll: 0) { tty.type("stty size"); return tty.waitFor("40 100", timeout: 2).contains("40 100") },
                "the window change reached the remote PTY")
        tty.type("printf 'caf\\303\\251 \\342\\234\\223\\n'")
        #expect(tty.waitFor("café ✓").contains("café ✓"))
        tty.type("~?", enter: false)
        #expect(tty.waitFor("Supported escape sequences:").contains("~.   - terminate connection"))
        tty.type("", enter: true)
        tty.type("~.", enter: false)
        let done = tty.waitFor("[exit")
        #expect(done.contains("Connection to 127.0.0.1 closed."))
        #expect(done.contains("\nicanon\n"), "the local terminal is back in canonical mode: \(done)")
        #expect(done.contains("[exit 255]"))
    }

    @Test func theRemoteExitStatusBecomesOurs() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let tty = try session(h, ["ssh", h.target])
        defer { tty.close() }
        tty.type("echo up-$((1+1))")     // wait for the output, not the echo of what was typed
        tty.waitFor("up-2")
        tty.type("exit 7")
        let done = tty.waitFor("[exit")
        #expect(done.contains("[exit 7]"), "\(done)")
        #expect(done.contains("\nicanon\n"))
    }

    @Test func aServerKilledMidSessionRestoresTheTerminalAndSaysSo() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        let tty = try session(h, ["ssh", h.target])
        defer { tty.close() }
        tty.type("echo alive-$((2+2))")
        tty.waitFor("alive-4")
        h.server.crash()
        let done = tty.waitFor("[exit")
        #expect(done.contains("Connection to 127.0.0.1 closed"), "\(done)")
        #expect(done.contains("\nicanon\n"))
        #expect(done.contains("[exit 255]"))
    }

    @Test func withoutATerminalTheShellRunsWithoutAPTY() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let r = try h.termhost(["ssh", h.target], stdin: "echo from-pipe\nexit 4\n")
        #expect(r.stdout == "from-pipe\n")
        #expect(r.stderr == "Pseudo-terminal will not be allocated because stdin is not a terminal.\n")
        #expect(r.status == 4)
    }
}

@Suite struct CommandHistoryEndToEndTests {
    @Test func commandsReportedByShellIntegrationAreRecordedPerHost() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        try h.termhost(["hosts", "add", "lab", "127.0.0.1", "--port", String(h.server.port), "--user", NSUserName()])
        #expect(try h.termhost(["hosts", "commands", "lab"]).stdout.hasPrefix("No commands recorded for 'lab'"))
        let tty = try TmuxSession(command: [Paths.termhost, "ssh", "lab"], environment: h.environment)
        defer { tty.close() }
        // What a shell integration script prints before running each command line.
        tty.type(#"printf '\033]633;E;git status;f00dnonce\007'; printf '\033]633;E;echo a\\x3bb\033\\'; echo reported-$((3+3))"#)
        tty.waitFor("reported-6")
        tty.type("exit")
        tty.waitFor("[exit")
        let r = try h.termhost(["hosts", "commands", "lab"])
        #expect(r.stdout == "git status\necho a;b\n", "\(r.output)")
    }
}
