import Foundation
import Glibc
import Testing
import TestSupport

/// Two users at once on one connection (transport.h, TERMHOST_SSH_OPEN_SHARED): while a
/// forwarding rule holds its connection in the daemon, `termhost exec` to the same host runs as
/// one more channel on it (one log-in, counted in sshd's log), with its stdin, stdout, stderr
/// and exit status intact; a Ctrl-C or the end of an exec leaves the forward running; and the
/// rule's stop leaves a running exec alone. The forward reaches the test's own sshd, so a
/// connection through it reads the server's banner.
@Suite struct ConcurrentSharingTests {
    static func logIns(_ ssh: SSHHarness) -> Int { SharedConnectionTests.logIns(ssh) }

    @Test func execsRideAForwardingRulesConnectionAndEachEndsOnlyItsOwn() throws {
        let setup = try DaemonSetup("termhost-mux", plugins: ["libForwardingPlugin.so": "org.termhost.forwarding"])
        defer { setup.stop() }
        let (ssh, daemon) = (setup.ssh, setup.daemon)
        #expect(try ssh.termhost(["forward", "add", "--name", "web", ssh.target, "-L", "0:127.0.0.1:\(ssh.server.port)"]).status == 0)
        let started = try ssh.termhost(["forward", "start", "web"], timeout: 120)
        #expect(started.status == 0, "\(started.output)")
        let port = try #require(ForwardingInDaemonTests.port(started.stdout), "\(started.output)")
        #expect(ForwardingInDaemonTests.banner(port).hasPrefix("SSH-2.0-"))
        #expect(Self.logIns(ssh) == 1, "\(ssh.server.log)")

        // Joined: no new log-in, and the command's streams and status are its own. The input
        // is larger than one step's quantum (256 KiB), so it is streamed in several chunks.
        let input = (0..<40_000).map { "line \($0)\n" }.joined()
        let cat = try ssh.termhost(["exec", ssh.target, "--", "cat"], stdin: input)
        #expect(cat.status == 0 && cat.stdout == input, "\(cat.stderr) (\(cat.stdout.utf8.count) of \(input.utf8.count) bytes)")
        let mixed = try ssh.termhost(["exec", ssh.target, "--", "sh", "-c", "'echo out; echo err >&2; exit 3'"])
        #expect(mixed.status == 3 && mixed.stdout == "out\n" && mixed.stderr.contains("err"), "\(mixed.output)")
        #expect(Self.logIns(ssh) == 1, "the execs rode the rule's connection: \(ssh.server.log)")
        #expect(ForwardingInDaemonTests.banner(port).hasPrefix("SSH-2.0-"), "an exec's end closed only its own channel")

        // Ctrl-C closes the command's channel, not the connection under the forward.
        let sleeper = try Background(Paths.termhost, ["exec", ssh.target, "--", "sleep", "60"], environment: ssh.environment)
        #expect(Wait.until(timeout: 60) { daemon.log.components(separatedBy: "runs 'exec' in scene").count > 3 }, "\(daemon.log)")
        kill(sleeper.process.processIdentifier, SIGINT)
        let ended = Wait.until(timeout: 30) { !sleeper.process.isRunning }
        #expect(ended, "the command was cancelled: \(daemon.log)")
        if ended { #expect(sleeper.process.terminationStatus == 130) } else { kill(sleeper.process.processIdentifier, SIGKILL) }
        #expect(ForwardingInDaemonTests.banner(port).hasPrefix("SSH-2.0-"), "the forward outlived the cancelled exec")

        // The rule stops while an exec runs on its connection: the exec finishes.
        let marker = setup.dir.sub("exec-running")
        let running = try Background(Paths.termhost, ["exec", ssh.target, "--", "sh", "-c", "'touch \(marker); sleep 2; echo survived'"],
                                     environment: ssh.environment)
        defer { if running.process.isRunning { kill(running.process.processIdentifier, SIGKILL) } }
        #expect(Wait.until(timeout: 60) { FileManager.default.fileExists(atPath: marker) }, "\(daemon.log)")
        let stop = try ssh.termhost(["forward", "stop", "web"])
        #expect(stop.status == 0, "\(stop.output)")
        #expect(Wait.until(timeout: 60) { !running.process.isRunning })
        #expect(running.firstLine() == "survived\n" && running.process.terminationStatus == 0, "\(running.errorOutput())")

        // The last user gone, the connection is kept: the next exec takes it.
        #expect(try ssh.termhost(["exec", ssh.target, "--", "true"]).status == 0)
        #expect(Self.logIns(ssh) == 1, "\(ssh.server.log)")
    }
}
