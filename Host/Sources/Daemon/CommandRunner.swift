/// How the daemon runs a command for a client: given by whoever owns the host runtime (the
/// CLI's `daemon run`), so this module knows scenes and streams, not plugins.
public struct CommandRunner: Sendable {
    /// The client's streams, as the daemon received them (it owns them until the command ends).
    public struct Streams: Sendable {
        public let input: Int32, output: Int32, error: Int32
    }

    /// Whether the command `name` may run in the daemon now: `release` is to be called once it
    /// ended. Refused (with why) when no feature running in the daemon contributes it, or when
    /// its plugin is running another command: the ABI promises a plugin that its commands never
    /// overlap ([main]), so the client runs that one itself.
    public let admit: @Sendable (_ name: String) -> Admission

    public enum Admission: Sendable {
        case admitted(release: @Sendable () -> Void)
        case refused(String)
    }
    /// What a client asked to run, and with what.
    public struct Request: Sendable {
        public let argv: [String]
        /// `--json` was given.
        public let json: Bool
        /// The client's stdin and stderr are its terminal: prompts may use them.
        public let interactive: Bool
        public let streams: Streams
        /// The client's environment (ClientEnvironment); nil from a client that sent none.
        public let environment: [String: String]?
    }

    /// Runs the request's argv in a new scene whose streams and environment are the client's,
    /// and returns its exit status once it ended (blocking). `started` gets the scene's ID
    /// before the command runs, and says whether it may run (false: its client never heard
    /// that it would, so it must not).
    public let run: @Sendable (_ request: Request, _ started: @Sendable (UInt64) -> Bool) -> Int32
    /// Asks the command running in a scene to stop (termhost.cancel/1), from any thread.
    public let cancel: @Sendable (_ scene: UInt64) -> Void
    /// Moves a command's scene to background (its client stopped: Ctrl-Z) or back to active
    /// (continued), from any thread.
    public let setBackground: @Sendable (_ scene: UInt64, _ background: Bool) -> Void

    public init(admit: @escaping @Sendable (String) -> Admission,
                run: @escaping @Sendable (Request, @Sendable (UInt64) -> Bool) -> Int32,
                cancel: @escaping @Sendable (UInt64) -> Void,
                setBackground: @escaping @Sendable (UInt64, Bool) -> Void) {
        self.admit = admit
        self.run = run
        self.cancel = cancel
        self.setBackground = setBackground
    }
}
