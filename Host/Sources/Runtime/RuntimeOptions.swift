import TermhostLoader
import TermhostServices

/// How a host process runs; the CLI fills it from flags and the environment.
public struct RuntimeOptions: Sendable {
    public var safeMode = false
    public var nonInteractive = false
    public var logLevel: LogSink.Level = .warning
    public var searchPath: PluginSearchPath = .standard()
    public var paths: HostPaths = .standard()
    public var probe = ProbeRunner()
    public var shutdownBound = 3.0
    public var host: Preflight.HostIdentity = .current
    /// Whether this process is the daemon, and what becomes of a command that asks for it
    /// (termhost.daemon/1).
    public var daemon: DaemonRole = .cli(rerunning: false)

    public init() {}
}

/// Why the host refused to start; the CLI prints it and exits with status 3.
public struct StartupError: Error, Sendable, CustomStringConvertible {
    public let messages: [String]
    public var description: String { messages.joined(separator: "\n") }
}
