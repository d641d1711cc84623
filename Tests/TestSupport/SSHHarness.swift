import Foundation

/// A scratch home (for ~/.ssh), the SSH plugin (plus any others a test adds) on the plugin
/// path, and a real sshd.
public struct SSHHarness {
    public let dir: TemporaryDirectory
    public let home: String
    public let plugins: String
    public let key: UserKey
    public let server: SSHServer
    public var extraEnvironment: [String: String] = [:]

    public init(dir: TemporaryDirectory, keyType: String = "ed25519", passphrase: String = "", trustServer: Bool = true,
         authorize: Bool = true, serverConfig: String = "", sshdProgram: String = "/usr/sbin/sshd") throws {
        self.dir = dir
        home = dir.sub("home")
        plugins = dir.sub("plugins")
        try Fixtures.sshPlugin(in: plugins)
        key = try UserKey(in: home + "/.ssh", name: keyType == "ed25519" ? "id_ed25519" : "id_\(keyType)", type: keyType, passphrase: passphrase)
        server = try SSHServer(in: dir, authorizedKeys: authorize ? [key.publicLine] : [], extraConfig: serverConfig, program: sshdProgram)
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
