import Foundation
import Glibc
import TermhostDaemon
import Testing
import TestSupport

/// The daemon under systemd (Scripts/systemd, staged to lib/systemd/user): the units are valid
/// for the staged binary, and a socket passed the way systemd passes it (descriptor 3, LISTEN_FDS,
/// LISTEN_PID) is used, answered on, and left in place when the daemon stops, so the next
/// connection starts the daemon again.
@Suite struct SocketActivationTests {
    /// What the user's systemd does with termhostd.socket: binds `path`, listens, and starts the
    /// daemon with the socket as descriptor 3, LISTEN_FDS=1 and LISTEN_PID naming the daemon.
    /// (Done by a few lines of Python rather than systemd-socket-activate, which hands the
    /// program it starts a signal mask with nearly every signal blocked.)
    static func activate(_ daemon: DaemonHarness, listening path: String) throws -> Background {
        let script = """
        import os, socket, sys
        path, log, termhost = sys.argv[1:4]
        s = socket.socket(socket.AF_UNIX)
        s.bind(path)
        s.listen(16)
        os.dup2(s.fileno(), 3)
        os.set_inheritable(3, True)
        os.dup2(os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), 2)
        os.execve(termhost, [termhost, "daemon"], dict(os.environ, LISTEN_FDS="1", LISTEN_PID=str(os.getpid())))
        """
        return try Background("/usr/bin/python3", ["-c", script, path, daemon.logPath, Paths.termhost], environment: daemon.environment)
    }

    @Test func theUserUnitsAreValidForTheBuiltBinary() throws {
        let dir = TemporaryDirectory("termhost-units")
        defer { dir.remove() }
        let service = try String(contentsOfFile: Paths.root + "/Scripts/systemd/termhostd.service", encoding: .utf8)
            .replacingOccurrences(of: "@BINDIR@", with: (Paths.termhost as NSString).deletingLastPathComponent)
        _ = dir.write("units/termhostd.service", service)
        try FileManager.default.copyItem(atPath: Paths.root + "/Scripts/systemd/termhostd.socket", toPath: dir.path + "/units/termhostd.socket")
        let run = dir.sub("run")
        chmod(run, 0o700)
        let verified = try Shell.run("/usr/bin/systemd-analyze", ["verify", "--man=no", "--user", dir.path + "/units/termhostd.socket", dir.path + "/units/termhostd.service"],
                                     environment: ["PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": run, "HOME": dir.path])
        #expect(verified.status == 0, "\(verified.output)")
    }

    @Test func aSocketPassedBySystemdIsUsedAndLeftInPlace() throws {
        let daemon = DaemonHarness()
        defer { daemon.remove() }
        // systemd makes the directory (DirectoryMode=0700) and binds the socket (SocketMode=0600).
        try FileManager.default.createDirectory(atPath: daemon.address.directory, withIntermediateDirectories: true)
        chmod(daemon.address.directory, 0o700)
        let activator = try Self.activate(daemon, listening: daemon.address.socket)
        defer { ProcessTree.kill(activator.process.processIdentifier) }
        #expect(Wait.until(timeout: 120) { access(daemon.address.socket, F_OK) == 0 })
        // A connection made while the daemon starts waits in the socket's queue.
        #expect(Wait.until(timeout: 120) { (try? daemon.run("daemon", "status").status) == 0 }, "\(daemon.log)")
        #expect(daemon.log.contains("(passed by systemd)"), "\(daemon.log)")
        let stop = try daemon.run("daemon", "stop")
        #expect(stop.status == 0, "\(stop.output)")
        #expect(access(daemon.address.socket, F_OK) == 0, "the daemon removed systemd's socket")
    }

    @Test func aSocketOtherThanTheDaemonsIsRefused() throws {
        let daemon = DaemonHarness()
        defer { daemon.remove() }
        try FileManager.default.createDirectory(atPath: daemon.address.directory, withIntermediateDirectories: true)
        chmod(daemon.address.directory, 0o700)
        let elsewhere = daemon.dir.path + "/other.sock"
        let activator = try Self.activate(daemon, listening: elsewhere)
        defer { ProcessTree.kill(activator.process.processIdentifier) }
        #expect(Wait.until(timeout: 120) { access(elsewhere, F_OK) == 0 })
        // The daemon refuses a socket bound elsewhere, and exits.
        #expect(Wait.until(timeout: 120) { daemon.log.contains("the socket systemd passed: it is bound at \(elsewhere), not at \(daemon.address.socket)") }, "\(daemon.log)")
    }
}
