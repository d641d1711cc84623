/// Documented exit statuses of `termhost` (Docs/Operators.md). Plugin commands return their own
/// status, by convention 0, 1 or 2.
enum ExitCode {
    static let success: Int32 = 0
    /// The command ran and failed, or `doctor` / `plugins check` found problems.
    static let failure: Int32 = 1
    /// Unknown command or option, wrong arguments.
    static let usage: Int32 = 2
    /// The host refused to start: malformed policy or user config, or a required feature missing.
    static let refusedToStart: Int32 = 3
    /// Ended by a signal: 128 + the signal number (SIGHUP 129, SIGINT 130, SIGTERM 143).
    static func signal(_ n: Int32) -> Int32 { 128 + n }
}
