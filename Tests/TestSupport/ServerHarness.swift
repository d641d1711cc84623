import Foundation

/// A server other than OpenSSH's sshd that the tests start on loopback (Dropbear, asyncssh):
/// it accepts the given keys and says how to trust it.
public protocol LoopbackSSHServer {
    init(in dir: TemporaryDirectory, authorizedKeys: [String]) throws
    var port: Int { get }
    /// The known_hosts line OpenSSH would write for it (plain, not hashed).
    var knownHostsLine: String { get }
    func stop()
}

/// SSHHarness's counterpart for the other servers: a scratch home (for ~/.ssh) that trusts the
/// server, the SSH plugin on the plugin path, and the server on loopback accepting the key.
public struct ServerHarness<Server: LoopbackSSHServer> {
    public let dir: TemporaryDirectory
    public let home: String
    public let plugins: String
    public let key: UserKey
    public let server: Server

    public init(dir: TemporaryDirectory) throws {
        self.dir = dir
        home = dir.sub("home")
        plugins = dir.sub("plugins")
        try Fixtures.sshPlugin(in: plugins)
        key = try UserKey(in: home + "/.ssh", name: "id_ed25519")
        server = try Server(in: dir, authorizedKeys: [key.publicLine])
        _ = dir.write("home/.ssh/known_hosts", server.knownHostsLine + "\n")
    }

    public var environment: [String: String] {
        var env = Fixtures.environment(dir, pluginPath: plugins)
        env["HOME"] = home
        env.removeValue(forKey: "SSH_AUTH_SOCK")
        return env
    }

    public var target: String { "\(NSUserName())@127.0.0.1:\(server.port)" }

    @discardableResult
    public func termhost(_ args: [String], stdin: String? = nil, timeout: Double = 60) throws -> Shell.Result {
        try Shell.run(Paths.termhost, args, environment: environment, stdin: stdin, timeout: timeout)
    }
}

public typealias DropbearHarness = ServerHarness<DropbearServer>
public typealias AsyncSSHHarness = ServerHarness<AsyncSSHServer>
