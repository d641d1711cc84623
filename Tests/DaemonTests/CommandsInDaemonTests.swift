import Foundation
import Glibc
import Testing
import TestSupport

/// With a daemon running, a plugin's command runs in it as a scene of the calling terminal: its
/// stdin, stdout and stderr are the caller's (passed over the socket), its exit status and a
/// Ctrl-C travel across, and the terminal behaves as if the command ran in the CLI.
@Suite struct CommandsInDaemonTests {
    typealias Setup = PersistentSessionEndToEndTests.Setup

    @Test func pipesExitStatusAndStderrAreTheCallersAndInProcessStaysOut() throws {
        let s = try Setup()
        defer { s.close() }
        let echoed = try s.ssh.termhost(["exec", s.ssh.target, "--", "cat"], stdin: "through the daemon\n")
        #expect(echoed.status == 0 && echoed.stdout == "through the daemon\n", "\(echoed.stderr)")
        let failing = try s.ssh.termhost(["exec", s.ssh.target, "--", "sh", "-c", "'echo to-stderr >&2; exit 5'"])
        #expect(failing.status == 5 && failing.stderr.contains("to-stderr") && failing.stdout.isEmpty, "\(failing.stderr)")
        #expect(Wait.until(timeout: 30) { s.daemon.log.components(separatedBy: "runs 'exec' in scene").count == 3 }, "\(s.daemon.log)")
        // --in-process keeps the command here: the daemon hears nothing of it.
        let here = try s.ssh.termhost(["--in-process", "exec", s.ssh.target, "--", "echo", "here"])
        #expect(here.status == 0 && here.stdout == "here\n")
        #expect(s.daemon.log.components(separatedBy: "runs 'exec' in scene").count == 3)
    }

    @Test func ctrlCOnTheClientCancelsTheCommandInTheDaemon() throws {
        let s = try Setup()
        defer { s.close() }
        let client = try Background(Paths.termhost, ["exec", s.ssh.target, "--", "sleep", "60"], environment: s.ssh.environment)
        #expect(Wait.until(timeout: 60) { s.daemon.log.contains("runs 'exec' in scene") })
        kill(client.process.processIdentifier, SIGINT)
        let ended = Wait.until(timeout: 30) { !client.process.isRunning }
        #expect(ended, "the command was cancelled, not left to run 60 s: \(s.daemon.log)")
        if ended { #expect(client.process.terminationStatus == 130) } else { kill(client.process.processIdentifier, SIGKILL) }
        #expect(s.daemon.log.contains("got signal 2: cancelling its command"), "\(s.daemon.log)")
    }

    @Test func anInteractiveShellThroughTheDaemonTypesResizesAndRestoresTheTerminal() throws {
        let s = try Setup()
        defer { s.close() }
        let command = [Paths.termhost, "ssh", s.ssh.target].map { "'\($0)'" }.joined(separator: " ")
        let tty = try TmuxSession(command: ["/bin/sh", "-c", "\(command); s=$?; stty -a | tr ' ' '\\n' | grep -x -- '-*icanon'; exit $s"],
                                  environment: s.ssh.environment)
        defer { tty.close() }
        tty.type("echo ready-$((6*7))")
        #expect(tty.waitFor("ready-42").contains("ready-42"))
        #expect(s.daemon.log.contains("runs 'ssh' in scene"), "\(s.daemon.log)")
        tty.resize(columns: 100, rows: 40)
        #expect(Wait.until(poll: 0) { tty.type("stty size"); return tty.waitFor("40 100", timeout: 2).contains("40 100") },
                "the client's window change reached the remote PTY")
        tty.type("exit 7")
        let done = tty.waitFor("[exit")
        #expect(done.contains("[exit 7]"), "\(done)")
        #expect(done.contains("\nicanon\n"), "the terminal is back in canonical mode: \(done)")
    }
}
