/// How the daemon runs a command for a client: given by whoever owns the host runtime (the
/// CLI's `daemon run`), so this module knows scenes and streams, not plugins.
public struct CommandRunner: Sendable {
    /// The client's streams, as the daemon received them (it owns them until the command ends).
    public struct Streams: Sendable {
        public let input: Int32, output: Int32, error: Int32
    }

    /// Whether a feature running in the daemon contributes the command `name`.
    public let knows: @Sendable (_ name: String) -> Bool
    /// Runs `argv` in a new scene whose streams are the client's, and returns its exit status
    /// once it ended (blocking). `started` gets the scene's ID before the command runs.
    public let run: @Sendable (_ argv: [String], _ json: Bool, _ interactive: Bool, _ streams: Streams,
                               _ started: @Sendable (UInt64) -> Void) -> Int32
    /// Asks the command running in a scene to stop (termhost.cancel/1), from any thread.
    public let cancel: @Sendable (_ scene: UInt64) -> Void

    public init(knows: @escaping @Sendable (String) -> Bool,
                run: @escaping @Sendable ([String], Bool, Bool, Streams, @Sendable (UInt64) -> Void) -> Int32,
                cancel: @escaping @Sendable (UInt64) -> Void) {
        self.knows = knows
        self.run = run
        self.cancel = cancel
    }
}
