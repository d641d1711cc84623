import Foundation
import Testing
import TestSupport

/// The exit status survives a server that sends EOF before it (asyncssh, its own order when a
/// command closes its output and exits later) and a command that closes its output while its
/// input still comes (OpenSSH); a channel closed with no status at all is 255, said so, never 0.
/// Before the fix each of these reported 0 or lost input: the channel was closed at the
/// server's EOF.
@Suite(.timeLimit(.minutes(2))) struct ExitStatusEndToEndTests {
    @Test func aStatusSentAfterEOFIsTheExitStatusOfExecSSHAndTheTransport() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let a = try AsyncSSHHarness(dir: dir)
        defer { a.server.stop() }
        let exec = try a.termhost(["exec", a.target, "--", "eof-then-exit", "7"])
        #expect(exec.status == 7 && exec.stdout == "out\n", "\(exec.output)\n\(a.server.log)")
        let command = try a.termhost(["ssh", a.target, "eof-then-exit", "9"])
        #expect(command.status == 9 && command.stdout == "out\n", "\(command.output)")
        // A shell without a terminal, its input from a pipe, as `echo 'exit 5' | ssh HOST`.
        let shell = try a.termhost(["ssh", a.target], stdin: "exit 5\n")
        #expect(shell.status == 5 && shell.stdout == "out\n", "\(shell.output)")
        try Fixtures.serviceClient(source: "transport-plugin.c", id: "org.test.transport", command: "tp",
                                   requires: "org.termhost.ssh.transport/1", in: a.plugins, defines: ["-D_DEFAULT_SOURCE"], abi: "1.1")
        let transport = try a.termhost(["tp", "status", a.target, "eof-then-exit 3"])
        #expect(transport.stdout == "out: out\nstatus: 0 exit 3\n", "\(transport.output)")
    }

    /// Needs Termhost's libssh2 (exit-reported.patch): a stock one cannot tell "no status" from 0,
    /// and the plugin then reports 0, as Docs/SSH.md says.
    @Test(.enabled(if: (try? LoadedLibSSH2.exports("libssh2_channel_termhost_exit_reported", of: Paths.products + "/libSSHPlugin.so")) == true,
                   "needs Termhost's libssh2 (libssh2_channel_termhost_exit_reported)"))
    func aChannelClosedWithoutAStatusIs255AndSaysSo() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let a = try AsyncSSHHarness(dir: dir)
        defer { a.server.stop() }
        let exec = try a.termhost(["exec", a.target, "--", "no-status"])
        #expect(exec.status == 255, "\(exec.output)\n\(a.server.log)")
        #expect(exec.stdout == "out\n")
        #expect(exec.stderr == "termhost: the server closed the channel without an exit status; reporting 255\n")
        try Fixtures.serviceClient(source: "transport-plugin.c", id: "org.test.transport", command: "tp",
                                   requires: "org.termhost.ssh.transport/1", in: a.plugins, defines: ["-D_DEFAULT_SOURCE"], abi: "1.1")
        let transport = try a.termhost(["tp", "status", a.target, "no-status"])
        #expect(transport.stdout == """
        out: out
        out: termhost: the server closed the channel without an exit status; reporting 255
        status: 0 exit 255

        """, "\(transport.output)")
    }

    /// OpenSSH's sshd sends EOF as soon as the command has closed stdout and stderr; its input
    /// still has to arrive whole (8 MiB, four times the server's window, so most of it is sent
    /// after the EOF), and its status after that.
    @Test func inputStillGoesAfterTheCommandClosedItsOutput() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let received = dir.path + "/received"
        let line = String(repeating: "0123456789abcdef", count: 4) + "\n"
        let input = String(repeating: line, count: 8 * 1024 * 1024 / line.utf8.count)
        let r = try h.termhost(["exec", h.target, "--", "exec >&- 2>&-; cat > \(received); exit 7"], stdin: input)
        #expect(r.status == 7, "\(r.output)")
        let got = (try? Data(contentsOf: URL(fileURLWithPath: received))) ?? Data()
        #expect(got.count == input.utf8.count)
        // Compared apart from the expectation: a failed #expect would print both 8 MiB values.
        let whole = got == Data(input.utf8)
        #expect(whole, "the received bytes differ from the input")
    }

    /// A command killed by a signal: sshd reports exit-signal, which is 255 and a line naming it
    /// (Termhost's libssh2 checks the name's length against its packet before reading it).
    @Test func aSignalIs255AndNamed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try SSHHarness(dir: dir)
        defer { h.server.stop() }
        let r = try h.termhost(["exec", h.target, "--", "echo before; kill -TERM $$"])
        #expect(r.status == 255 && r.stdout == "before\n", "\(r.output)")
        #expect(r.stderr == "termhost: remote command killed by signal TERM\n", "\(r.stderr)")
    }
}
