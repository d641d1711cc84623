import Foundation
import Testing
import TestSupport

/// `termhost exec` and `termhost ssh` against a stock Dropbear on loopback: another server's
/// channel windows (24,576 bytes) and its own shell sessions.
@Suite(.enabled(if: DropbearServer.available, "needs root (a mount namespace) and dropbear-bin"))
struct DropbearExecEndToEndTests {
    @Test func execSeparatesTheStreamsAndReturnsTheStatus() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try DropbearHarness(dir: dir)
        defer { h.server.stop() }
        let r = try h.termhost(["exec", h.target, "--", "sh", "-c", "'echo out; echo err >&2; exit 3'"])
        #expect(r.stdout == "out\n", "\(r.output)\n\(h.server.log)")
        #expect(r.stderr == "err\n")
        #expect(r.status == 3)
    }

    /// Standard input many times Dropbear's window: every write beyond it waits for an adjust.
    /// (A digest comes back, not the input: Shell.run writes all of stdin before it reads the
    /// output, so an echo larger than a pipe would hold both sides.)
    @Test func execCarriesStandardInputPastTheServersWindow() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try DropbearHarness(dir: dir)
        defer { h.server.stop() }
        let text = (0..<20_000).map { "line \($0) ✓ ünïcødé\n" }.joined()
        let local = dir.write("input.txt", text)
        let r = try h.termhost(["exec", h.target, "--", "sha256sum"], stdin: text)
        #expect(r.status == 0, "\(r.stderr)\n\(h.server.log)")
        let expected = try Shell.run("/usr/bin/sha256sum", [local]).stdout.split(separator: " ").first.map(String.init)
        #expect(r.stdout.split(separator: " ").first.map(String.init) == expected, "\(r.output)")
    }

    @Test func aTerminalSessionRunsACommandAndEndsWithTheShell() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try DropbearHarness(dir: dir)
        defer { h.server.stop() }
        let tty = try TmuxSession(command: [Paths.termhost, "ssh", h.target], environment: h.environment)
        defer { tty.close() }
        tty.type("echo ready-$((6*7))")
        #expect(tty.waitFor("ready-42").contains("ready-42"), "\(h.server.log)")
        tty.type("exit 0")
        #expect(tty.waitFor("[exit").contains("[exit 0]"))
    }
}
