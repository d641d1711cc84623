import Foundation

/// SSHHarness's counterpart for Dropbear: a scratch home (for ~/.ssh) that trusts the server,
/// the SSH plugin on the plugin path, and a real Dropbear on loopback that accepts the key.
public struct DropbearHarness {
    public let dir: TemporaryDirectory
    public let home: String
    public let plugins: String
    public let key: UserKey
    public let server: DropbearServer

    public init(dir: TemporaryDirectory) throws {
        self.dir = dir
        home = dir.sub("home")
        plugins = dir.sub("plugins")
        try Fixtures.sshPlugin(in: plugins)
        key = try UserKey(in: home + "/.ssh", name: "id_ed25519")
        server = try DropbearServer(in: dir, authorizedKeys: [key.publicLine])
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
