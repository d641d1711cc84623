import Foundation

/// A real Dropbear server (Debian's dropbear-bin) on 127.0.0.1 and a random port, with its own
/// host key and authorized_keys in a temporary directory; started by the tests, stopped by
/// `stop()`. Dropbear is the other server people run (routers, containers, embedded boards),
/// and it differs from OpenSSH where libssh2 is fragile: a 24,576-byte channel window (`-W`).
///
/// Authorized keys: Dropbear 2022.83 reads them only from the home directory the password
/// database gives the user (`~/.ssh/authorized_keys`, no option names another file). So the
/// server runs with a private home (PrivateHome): a directory of the test bind-mounted over the
/// home of the user the tests run as, so the sessions' home (their working directory) is `home`.
/// That takes root, as `available` says.
///
/// SFTP: Dropbear runs the sftp-server path compiled into it, `/usr/lib/sftp-server` on Debian
/// (`strings /usr/sbin/dropbear | grep sftp`), a link that Debian's openssh-sftp-server
/// installs to `/usr/lib/openssh/sftp-server`: OpenSSH's server, reached through Dropbear's
/// channels and window.
///
/// Like sshd, Dropbear binds its port itself: when another program takes the port after it was
/// found free, Dropbear says so and exits, and the server starts again on another.
public final class DropbearServer: PlainLoopbackSSHServer {
    public static let program = "/usr/sbin/dropbear"

    /// Root (for the mount namespace), Dropbear and the SFTP server it runs.
    public static var available: Bool {
        PrivateHome.available && FileManager.default.isExecutableFile(atPath: program)
            && FileManager.default.isExecutableFile(atPath: "/usr/lib/sftp-server")
    }

    public let directory: String
    /// What the server's sessions see as the user's home.
    public let home: String
    public private(set) var port: Int
    public let hostPublicKey: String   // "ssh-ed25519 AAAA..."
    public private(set) var pid: pid_t = 0
    private let hostKey: String

    public init(in dir: TemporaryDirectory, authorizedKeys: [String]) throws {
        directory = dir.sub("dropbear-\(Int.random(in: 0..<1_000_000))")
        home = directory + "/home"
        hostKey = directory + "/host_key"
        let made = try Shell.run("/usr/bin/dropbearkey", ["-t", "ed25519", "-f", hostKey])
        guard made.status == 0 else { throw Shell.Failure(description: "dropbearkey failed: \(made.output)") }
        // "-y" prints the public key among other lines: "ssh-ed25519 AAAA... user@host".
        let shown = try Shell.run("/usr/bin/dropbearkey", ["-y", "-f", hostKey]).stdout
        guard let line = shown.split(separator: "\n").first(where: { $0.hasPrefix("ssh-") }) else {
            throw Shell.Failure(description: "dropbearkey -y printed no key: \(shown)")
        }
        hostPublicKey = line.split(separator: " ").prefix(2).joined(separator: " ")
        // Dropbear refuses keys in a file or directory that others can write.
        try FileManager.default.createDirectory(atPath: home + "/.ssh", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        chmod(home, 0o700)
        _ = FileManager.default.createFile(atPath: home + "/.ssh/authorized_keys",
                                           contents: Data((authorizedKeys.joined(separator: "\n") + "\n").utf8),
                                           attributes: [.posixPermissions: 0o600])
        port = SSHServer.freePort()
        for attempt in 1... {
            do {
                try spawn()
                return
            } catch is SSHServer.PortTaken where attempt < 5 {
                port = SSHServer.freePort()
            }
        }
    }

    deinit { stop() }

    /// Starts Dropbear again on the same port and keys (after stop() or crash()).
    public func restart() throws {
        guard pid == 0 else { return }
        try spawn()
    }

    private func spawn() throws {
        let logBefore = log.utf8.count
        // -F: stay in the foreground; -E: log to stderr; -s: keys only; -m: no motd.
        let args = try PrivateHome.wrap([DropbearServer.program, "-F", "-E", "-s", "-m", "-p", "127.0.0.1:\(port)", "-r", hostKey,
                                         "-P", directory + "/dropbear.pid"], home: home)
        pid = try ServerProcess.spawn(args, log: logPath)
        // Dropbear binds its ports before it logs "Not backgrounding" (and exits, saying why,
        // when it cannot); this run's lines only, as a restart appends to the same log.
        var exited = false
        var lines = ""
        let listening = Wait.until {
            lines = String(decoding: Data(log.utf8).dropFirst(logBefore), as: UTF8.self)
            if lines.contains("Not backgrounding") { return true }
            var status: Int32 = 0
            exited = waitpid(pid, &status, WNOHANG) == pid
            return exited
        }
        guard listening && !exited else {
            if !exited { stop() } else { pid = 0 }
            if lines.contains("Address already in use") { throw SSHServer.PortTaken() }
            throw Shell.Failure(description: "dropbear did not start: \(lines)")
        }
    }

    public func stop() { ServerProcess.stop(&pid) }

    /// Kills the server the hard way, its per-connection processes first (as a crash or a
    /// reboot would end live sessions).
    public func crash() { ServerProcess.crash(&pid) }

    /// The known_hosts line OpenSSH would write for this server (plain, not hashed).
    public var knownHostsLine: String { "[127.0.0.1]:\(port) \(hostPublicKey)" }

    private var logPath: String { directory + "/dropbear.log" }
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
}
