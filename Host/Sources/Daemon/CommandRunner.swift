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
    /// Runs `argv` in a new scene whose streams are the client's, and returns its exit status
    /// once it ended (blocking). `started` gets the scene's ID before the command runs.
    public let run: @Sendable (_ argv: [String], _ json: Bool, _ interactive: Bool, _ streams: Streams,
                               _ started: @Sendable (UInt64) -> Void) -> Int32
    /// Asks the command running in a scene to stop (termhost.cancel/1), from any thread.
    public let cancel: @Sendable (_ scene: UInt64) -> Void

    public init(admit: @escaping @Sendable (String) -> Admission,
                run: @escaping @Sendable ([String], Bool, Bool, Streams, @Sendable (UInt64) -> Void) -> Int32,
                cancel: @escaping @Sendable (UInt64) -> Void) {
        self.admit = admit
        self.run = run
        self.cancel = cancel
    }
}
