import Foundation

/// A real OpenSSH sshd on 127.0.0.1 and a random port, with its own host key, configuration and
/// authorized_keys in a temporary directory; started by the tests, stopped by `stop()`. As root,
/// its sessions see `home` (empty at first) as the user's home, never the real one (PrivateHome).
///
/// sshd cannot take a listening socket from its parent (only `sshd -i`, one connection per
/// process, which would change what its process tree and restarts look like to the tests), so
/// it binds a port the kernel just reported free; when another program takes that port first,
/// sshd says so and exits, and the server starts again on another (a bounded number of times).
public final class SSHServer {
    public let directory: String
    /// What the server's sessions see as the user's home (as root; elsewhere the real home).
    public let home: String
    public private(set) var port: Int
    public let hostPublicKey: String   // "ssh-ed25519 AAAA..."
    public private(set) var pid: pid_t = 0
    /// The sshd binary, or a symbolic link to it: sshd names its PAM service after the name it
    /// was started by, so a link lets a test use a PAM configuration of its own.
    public let program: String

    /// `certifyHostKey`, when given, is handed the host key's path before sshd starts and
    /// writes PATH-cert.pub (ssh-keygen -s CA -h), which sshd then serves (HostCertificate).
    public init(in dir: TemporaryDirectory, authorizedKeys: [String], hostKeyType: String = "ed25519",
                extraConfig: String = "", program: String = "/usr/sbin/sshd",
                certifyHostKey: ((_ hostKey: String) throws -> Void)? = nil) throws {
        self.program = program
        directory = dir.sub("sshd-\(Int.random(in: 0..<1_000_000))")
        home = directory + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let hostKey = directory + "/host_key"
        try Shell.run("/usr/bin/ssh-keygen", ["-q", "-t", hostKeyType, "-N", "", "-f", hostKey])
        hostPublicKey = try String(contentsOfFile: hostKey + ".pub", encoding: .utf8)
            .split(separator: " ").prefix(2).joined(separator: " ")
        _ = FileManager.default.createFile(atPath: directory + "/authorized_keys", contents: Data(authorizedKeys.joined(separator: "\n").utf8))
        var extraConfig = extraConfig
        if let certifyHostKey {
            try certifyHostKey(hostKey)
            extraConfig += "\nHostCertificate \(hostKey)-cert.pub"
        }
        port = SSHServer.freePort()
        self.extraConfig = extraConfig
        self.hostKey = hostKey
        for attempt in 1... {
            writeConfig()
            do {
                try spawn()
                return
            } catch is PortTaken where attempt < 5 {
                port = SSHServer.freePort()
            }
        }
    }

    private let extraConfig: String
    private let hostKey: String

    /// sshd could not bind its port: another program took it after it was found free.
    struct PortTaken: Error {}

    private func writeConfig() {
        // sshd keeps the first value it reads for a keyword, so the caller's lines come first.
        let config = """
        \(extraConfig)
        Port \(port)
        ListenAddress 127.0.0.1
        HostKey \(hostKey)
        PidFile \(directory)/sshd.pid
        AuthorizedKeysFile \(directory)/authorized_keys
        StrictModes no
        UsePAM no
        PasswordAuthentication no
        KbdInteractiveAuthentication no
        PermitRootLogin prohibit-password
        LogLevel VERBOSE
        Subsystem sftp internal-sftp
        """
        _ = FileManager.default.createFile(atPath: directory + "/sshd_config", contents: Data(config.utf8))
    }

    /// Starts sshd again on the same port, keys and configuration (after stop() or crash()).
    public func restart() throws {
        guard pid == 0 else { return }
        try spawn()
    }

    private func spawn() throws {
        if getuid() == 0 { mkdir("/run/sshd", 0o755) }   // privilege separation directory
        let logBefore = log.utf8.count
        pid = try ServerProcess.spawn(PrivateHome.wrap([program, "-D", "-e", "-f", directory + "/sshd_config"], home: home),
                                      log: directory + "/sshd.log")
        // Listening is what sshd's own log says (a port that accepts could be another
        // program's); this run's lines only, as a restart appends to the same log.
        var exited = false
        var lines = ""
        let listening = Wait.until {
            lines = String(decoding: Data(log.utf8).dropFirst(logBefore), as: UTF8.self)
            if lines.contains("Server listening on 127.0.0.1 port \(port).") { return true }
            var status: Int32 = 0
            exited = waitpid(pid, &status, WNOHANG) == pid
            return exited
        }
        guard listening && !exited else {
            if !exited { stop() } else { pid = 0 }
            if lines.contains("Address already in use") { throw PortTaken() }
            throw Shell.Failure(description: "sshd did not start: \(lines)")
        }
    }

    deinit { stop() }

    public func stop() { ServerProcess.stop(&pid) }

    /// Kills the server the hard way, its per-connection processes first (as a crash or a
    /// reboot would end live sessions).
    public func crash() { ServerProcess.crash(&pid) }

    /// The known_hosts line OpenSSH would write for this server (plain, not hashed).
    public var knownHostsLine: String { "[127.0.0.1]:\(port) \(hostPublicKey)" }

    public var log: String { (try? String(contentsOfFile: directory + "/sshd.log", encoding: .utf8)) ?? "" }

    /// A port the kernel reports free now (released at once: sshd binds it itself).
    static func freePort() -> Int {
        let listener = LoopbackListener()
        defer { listener.close() }
        return listener.port
    }
}

/// A user key pair made with ssh-keygen.
public struct UserKey: Sendable {
    public let privatePath: String
    public let publicLine: String

    public init(in dir: String, name: String, type: String = "ed25519", passphrase: String = "", bits: Int? = nil) throws {
        privatePath = dir + "/" + name
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var args = ["-q", "-t", type, "-N", passphrase, "-f", privatePath, "-C", "test-\(name)"]
        if let bits { args += ["-b", String(bits)] }
        let r = try Shell.run("/usr/bin/ssh-keygen", args)
        guard r.status == 0 else { throw Shell.Failure(description: "ssh-keygen failed: \(r.output)") }
        publicLine = try String(contentsOfFile: privatePath + ".pub", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

extension Fixtures {
    /// The SSH plugin as SwiftPM built it, bundled with its manifest into `parent`.
    @discardableResult
    public static func sshPlugin(in parent: String) throws -> Plugin {
        try bundle("libSSHPlugin.so", as: "org.termhost.ssh", in: parent)
    }

    /// A one-feature C test plugin that uses a plugin-provided service: compiles
    /// Tests/Fixtures/<source> as strict C99 into plugins/<id's last part>/lib<command>.so with
    /// a manifest whose feature (the plugin's ID) contributes `command`, requires `service` (and
    /// `alsoRequires`), and starts after the features in `after`.
    public static func serviceClient(source: String, id: String, command: String, requires service: String,
                                     alsoRequires: [String] = [], after: [String] = [],
                                     in plugins: String, defines: [String] = [], abi: String = Fixtures.abi) throws {
        let bundle = plugins + "/" + (id.split(separator: ".").last.map(String.init) ?? id)
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        let cc = try Shell.run("/usr/bin/cc", ["-std=c99", "-D_POSIX_C_SOURCE=200809L"] + defines +
                               ["-Wall", "-Wextra", "-Werror", "-pedantic", "-fPIC", "-shared", "-I", Paths.sdkInclude,
                                "-o", "\(bundle)/lib\(command).so", Paths.root + "/Tests/Fixtures/" + source])
        guard cc.status == 0 else { throw Shell.Failure(description: "cc failed: \(cc.output)") }
        let manifest = """
        { "id": "\(id)", "version": "1.0.0", "abi": "\(abi)", "library": "lib\(command).so",
          "features": [ { "id": "\(id)", "version": "1.0.0", "order": 1000,
                          "after": \(jsonList(after)), "requiresServices": \(jsonList([service] + alsoRequires)),
                          "commands": [ { "name": "\(command)", "summary": "test client" } ] } ] }
        """
        _ = FileManager.default.createFile(atPath: bundle + "/manifest.json", contents: Data(manifest.utf8))
    }

    /// IDs as a JSON array (they are plain ASCII: nothing to escape).
    private static func jsonList(_ ids: [String]) -> String { "[" + ids.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }

    /// The SFTP plugin as SwiftPM built it (it needs the SSH plugin beside it).
    @discardableResult
    public static func sftpPlugin(in parent: String) throws -> Plugin {
        try bundle("libSFTPPlugin.so", as: "org.termhost.sftp", in: parent)
    }
}
