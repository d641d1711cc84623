import Foundation

/// An SSH server the tests start on loopback (OpenSSH's sshd, Dropbear, asyncssh): its port
/// and how to trust it.
public protocol LoopbackSSHServer {
    var port: Int { get }
    /// The known_hosts line OpenSSH would write for it (plain, not hashed).
    var knownHostsLine: String { get }
    func stop()
}

/// A server started with nothing but the keys it accepts (Dropbear, asyncssh); sshd takes
/// more (its config) and is made by SSHHarness's own init.
public protocol PlainLoopbackSSHServer: LoopbackSSHServer {
    init(in dir: TemporaryDirectory, authorizedKeys: [String]) throws
}

/// The one harness of the end-to-end tests: a scratch home (for ~/.ssh) that trusts the server
/// (unless told not to), the SSH plugin (plus any others a test adds) on the plugin path, a user
/// key, and the server on loopback accepting it (unless told not to).
public struct ServerHarness<Server: LoopbackSSHServer> {
    public let dir: TemporaryDirectory
    public let home: String
    public let plugins: String
    public let key: UserKey
    public let server: Server
    public var extraEnvironment: [String: String] = [:]

    /// `makeServer` gets the keys the server is to accept.
    public init(dir: TemporaryDirectory, keyType: String = "ed25519", passphrase: String = "", trustServer: Bool = true,
                authorize: Bool = true, makeServer: ([String]) throws -> Server) throws {
        self.dir = dir
        home = dir.sub("home")
        plugins = dir.sub("plugins")
        try Fixtures.sshPlugin(in: plugins)
        key = try UserKey(in: home + "/.ssh", name: keyType == "ed25519" ? "id_ed25519" : "id_\(keyType)", type: keyType, passphrase: passphrase)
        server = try makeServer(authorize ? [key.publicLine] : [])
        if trustServer { _ = dir.write("home/.ssh/known_hosts", server.knownHostsLine + "\n") }
    }

    public var environment: [String: String] {
        var env = Fixtures.environment(dir, pluginPath: plugins, extra: extraEnvironment)
        env["HOME"] = home
        env.removeValue(forKey: "SSH_AUTH_SOCK")
        for (k, v) in extraEnvironment { env[k] = v }
        return env
    }

    public var target: String { "\(NSUserName())@127.0.0.1:\(server.port)" }

    @discardableResult
    public func termhost(_ args: [String], stdin: String? = nil, timeout: Double = 60) throws -> Shell.Result {
        try Shell.run(Paths.termhost, args, environment: environment, stdin: stdin, timeout: timeout)
    }

    public var knownHosts: String { (try? String(contentsOfFile: home + "/.ssh/known_hosts", encoding: .utf8)) ?? "" }
}

extension ServerHarness where Server: PlainLoopbackSSHServer {
    public init(dir: TemporaryDirectory) throws {
        try self.init(dir: dir) { keys in try Server(in: dir, authorizedKeys: keys) }
    }
}

public typealias DropbearHarness = ServerHarness<DropbearServer>
public typealias AsyncSSHHarness = ServerHarness<AsyncSSHServer>
