import Foundation

/// One device in a multi-process sync test: its own data directory (SQLite store, secrets file)
/// and HOME, running separate `termhost` processes with the plugins in `plugins`.
public struct TermhostDevice: Sendable {
    public let dir = TemporaryDirectory()
    public let env: [String: String]

    public init(plugins: String, extra: [String: String] = [:]) {
        var env = Fixtures.environment(dir, pluginPath: plugins, extra: extra)
        env["HOME"] = dir.sub("home")
        self.env = env
    }

    @discardableResult
    public func run(_ args: String..., stdin: String? = nil) throws -> Shell.Result {
        try Shell.run(Paths.termhost, args, environment: env, stdin: stdin)
    }

    /// `run` without the test process's ssh-agent: only what this device stores can be
    /// offered to a server.
    @discardableResult
    public func runWithoutAgent(_ args: String...) throws -> Shell.Result {
        var env = self.env
        env.removeValue(forKey: "SSH_AUTH_SOCK")
        return try Shell.run(Paths.termhost, args, environment: env)
    }

    /// Points this device at a PostgreSQL vault as a user would: `termhost sync backend set
    /// postgres KEY=VALUE... --password-stdin`, the password on stdin. Throws with the
    /// command's output when it is refused.
    public func setPostgresBackend(_ settings: [String], password: String) throws {
        let set = try Shell.run(Paths.termhost, ["sync", "backend", "set", "postgres"] + settings + ["--password-stdin"],
                                environment: env, stdin: password + "\n")
        guard set.status == 0 else { throw Shell.Failure(description: "sync backend set postgres failed: \(set.output)") }
    }

    /// The plugins a sync test needs in `parent`: SSH and Forwarding declare what syncs, Sync
    /// syncs it.
    public static func syncPlugins(in parent: String) throws {
        _ = try Fixtures.sshPlugin(in: parent)
        _ = try Fixtures.bundle("libForwardingPlugin.so", as: "org.termhost.forwarding", in: parent)
        _ = try Fixtures.bundle("libSyncPlugin.so", as: "org.termhost.sync", in: parent)
    }
}
