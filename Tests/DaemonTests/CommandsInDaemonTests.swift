import Foundation
import Glibc
import Testing
import TestSupport

/// With a daemon running, a plugin's command runs in it as a scene of the calling terminal: its
/// stdin, stdout and stderr are the caller's (passed over the socket), so is its environment,
/// its exit status and a Ctrl-C travel across, and the terminal behaves as if the command ran
/// in the CLI.
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

    @Test func theCommandUsesTheCallersAgentNotTheDaemons() throws {
        // The daemon runs without SSH_AUTH_SOCK (as under systemd); the key is only in an agent
        // that the calling shell points at. libssh2 reading the daemon's environment would find
        // no agent: the command must read the client's (termhost.environment/1).
        let s = try Setup()
        defer { s.close() }
        let agentKey = s.dir.path + "/agent_key"
        try FileManager.default.moveItem(atPath: s.ssh.key.privatePath, toPath: agentKey)
        try FileManager.default.removeItem(atPath: s.ssh.key.privatePath + ".pub")
        let socket = s.dir.path + "/agent.sock"
        let agent = Shell.spawnBackground("/usr/bin/ssh-agent", ["-D", "-a", socket])
        defer { Shell.stopBackground(agent) }
        #expect(Wait.until { FileManager.default.fileExists(atPath: socket) }, "ssh-agent never made its socket")
        let add = try Shell.run("/usr/bin/ssh-add", [agentKey], environment: ["SSH_AUTH_SOCK": socket])
        #expect(add.status == 0, "\(add.output)")
        #expect(try s.ssh.termhost(["exec", s.ssh.target, "--", "true"]).status == 255, "without the agent there is no key")
        var withAgent = s.ssh.environment
        withAgent["SSH_AUTH_SOCK"] = socket
        let r = try Shell.run(Paths.termhost, ["exec", s.ssh.target, "--", "echo", "agent"], environment: withAgent)
        #expect(r.status == 0 && r.stdout == "agent\n", "\(r.stderr)")
        #expect(Wait.until(timeout: 30) { s.daemon.log.components(separatedBy: "runs 'exec' in scene").count == 3 }, "both ran in the daemon: \(s.daemon.log)")
    }

    @Test func aRelativePathIsTheCallersDirectoryNotTheDaemons() throws {
        // `sftp get HOST:FILE` saves into the directory the user typed it in: the client sends
        // it (PWD), since the daemon's own is wherever the daemon was started.
        let dir = TemporaryDirectory("termhost-persist")
        defer { dir.remove() }
        let ssh = try SSHHarness(dir: dir)
        defer { ssh.server.stop() }
        try Fixtures.sftpPlugin(in: ssh.plugins)
        let daemon = DaemonHarness(environment: ssh.environment)
        defer { daemon.stop(); daemon.remove() }
        try daemon.start()
        let remote = dir.write("remote-file.txt", "from the server\n")
        let here = dir.sub("client-cwd")
        try FileManager.default.createDirectory(atPath: here, withIntermediateDirectories: true)
        var env = ssh.environment
        env["PWD"] = "/nonexistent-stale-pwd"   // a shell's stale PWD does not win over the real one
        let r = try Shell.run(Paths.termhost, ["sftp", "get", "-P", "\(ssh.server.port)", "\(NSUserName())@127.0.0.1:\(remote)"], environment: env, currentDirectory: here)
        #expect(r.status == 0, "\(r.output)")
        #expect((try? String(contentsOfFile: here + "/remote-file.txt", encoding: .utf8)) == "from the server\n", "\(r.output)")
        #expect(daemon.log.contains("runs 'sftp' in scene"), "it ran in the daemon: \(daemon.log)")
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

    @Test func ctrlZStopsTheClientAndPutsTheCommandsSceneInBackgroundUntilItContinues() throws {
        let s = try Setup()
        defer { s.close() }
        let client = try Background(Paths.termhost, ["exec", s.ssh.target, "--", "sleep", "60"], environment: s.ssh.environment)
        let pid = client.process.processIdentifier
        defer { if client.process.isRunning { kill(pid, SIGKILL) } }
        #expect(Wait.until(timeout: 60) { s.daemon.log.contains("runs 'exec' in scene") }, "\(s.daemon.log)")
        kill(pid, SIGTSTP)
        #expect(Wait.until(timeout: 30) { Self.state(pid) == "T" }, "the client stops itself, as a job does")
        #expect(Wait.until(timeout: 30) { s.daemon.log.contains("stopped (SIGTSTP): scene") }, "\(s.daemon.log)")
        kill(pid, SIGCONT)
        #expect(Wait.until(timeout: 30) { s.daemon.log.contains("continued (SIGCONT): scene") }, "\(s.daemon.log)")
        // Running again and still connected: a Ctrl-C still reaches the command.
        kill(pid, SIGINT)
        let ended = Wait.until(timeout: 30) { !client.process.isRunning }
        #expect(ended && client.process.terminationStatus == 130, "\(s.daemon.log)")
    }

    @Test func ctrlZOnACommandReadingTheTerminalIsRefusedNotLeftReadingTheShellsKeys() throws {
        let s = try Setup()
        defer { s.close() }
        let command = [Paths.termhost, "exec", s.ssh.target, "--", "sleep", "60"].map { "'\($0)'" }.joined(separator: " ")
        let tty = try TmuxSession(command: ["/bin/sh", "-c", "\(command); echo \"[exit $?]\"; sleep 60"], environment: s.ssh.environment)
        defer { tty.close() }
        #expect(Wait.until(timeout: 60) { s.daemon.log.contains("runs 'exec' in scene") }, "\(s.daemon.log)")
        tty.press("C-z")
        #expect(tty.waitFor("Ctrl-Z cannot suspend 'exec'").contains("runs it here, where Ctrl-Z works"))
        #expect(!s.daemon.log.contains("stopped (SIGTSTP)"), "the scene stays active: \(s.daemon.log)")
        tty.press("C-c")
        #expect(tty.waitFor("[exit").contains("[exit 130]"), "still running and still reachable by Ctrl-C")
    }

    /// The state letter of /proc/PID/stat (R, S, T for stopped...).
    static func state(_ pid: Int32) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(close, offsetBy: 2)...].split(separator: " ").first.map(String.init)
    }

    @Test func anInteractiveShellThroughTheDaemonTypesResizesAndRestoresTheTerminal() throws {
        let s = try Setup()
        defer { s.close() }
        // The remote PTY gets the client's TERM, not the daemon's.
        let command = "TERM=client-term-42 " + [Paths.termhost, "ssh", s.ssh.target].map { "'\($0)'" }.joined(separator: " ")
        let tty = try TmuxSession(command: ["/bin/sh", "-c", "\(command); s=$?; stty -a | tr ' ' '\\n' | grep -x -- '-*icanon'; exit $s"],
                                  environment: s.ssh.environment)
        defer { tty.close() }
        tty.type("echo ready-$((6*7)) term-$TERM")
        #expect(tty.waitFor("ready-42 term-client-term-42").contains("ready-42 term-client-term-42"))
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
