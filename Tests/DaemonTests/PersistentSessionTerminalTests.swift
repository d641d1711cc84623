import Foundation
import Testing
import TestSupport

/// `termhost ssh --persist`, `attach` and `sessions` as a person uses them, in real terminals
/// (tmux), against a real sshd: the daemon is started on demand and outlives the terminals.
@Suite struct PersistentSessionTerminalTests {
    /// termhost in a terminal; afterwards the shell reports whether the terminal is back in
    /// canonical mode, and the exit status.
    func terminal(_ h: SSHHarness, _ args: [String]) throws -> TmuxSession {
        let command = ([Paths.termhost] + args).map { "'\($0)'" }.joined(separator: " ")
        return try TmuxSession(command: ["/bin/sh", "-c", "\(command); s=$?; stty -a | tr ' ' '\\n' | grep -x -- '-*icanon'; exit $s"],
                               environment: h.environment)
    }

    @Test func aPersistentShellSurvivesItsTerminalAndAnotherTerminalReturnsToIt() throws {
        let dir = TemporaryDirectory("termhost-persist-tty")
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        // Whatever happens below, the daemon the first command starts is stopped.
        defer { _ = try? h.termhost(["daemon", "stop"]) }
        #expect(try h.termhost(["ssh", "--persist", "--no-autostart", h.target]).stderr.contains("no daemon is running"))

        let first = try terminal(h, ["ssh", "--persist", h.target])
        defer { first.close() }
        #expect(first.waitFor("~d detaches").contains("persistent session"))
        first.type("KEPT=value-$((40+1))")
        first.type("echo typed-$((1+1))")
        first.waitFor("typed-2")
        first.type("~d", enter: false)
        let detached = first.waitFor("[exit")
        #expect(detached.contains("[detached from session"), "\(detached)")
        #expect(detached.contains("\nicanon\n") && detached.contains("[exit 0]"), "\(detached)")

        let listed = try h.termhost(["sessions"]).stdout
        #expect(listed.contains("ID") && listed.contains("127.0.0.1") && (listed.contains("idle") || listed.contains("working")), "\(listed)")

        // A new terminal: the latest session, its scrollback replayed, its shell variable kept.
        let second = try terminal(h, ["attach"])
        defer { second.close() }
        #expect(second.waitFor("typed-2").contains("typed-2"), "the ring was replayed")
        second.type("echo kept=$KEPT")
        #expect(second.waitFor("kept=value-41").contains("kept=value-41"))
        second.type("exit 4")
        let ended = second.waitFor("[exit")
        #expect(ended.contains("[exit 4]"), "the shell's status is attach's: \(ended)")
        #expect(ended.contains("\nicanon\n"))
        #expect(try h.termhost(["sessions", "--json"]).stdout.contains(#""state":"ended""#))
    }
}
