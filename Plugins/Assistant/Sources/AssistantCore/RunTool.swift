/// A tool as the run engine sees it: the catalog entry (termhost.tools/1) with the flags the
/// engine and the policy act on.
public struct RunTool: Sendable, Equatable {
    public var name: String
    public var description: String
    public var inputSchemaJSON: String
    /// Changes nothing anywhere (TERMHOST_TOOL_READ_ONLY).
    public var readOnly: Bool
    /// May run at the same time as the other calls of its batch (TERMHOST_TOOL_PARALLEL_SAFE).
    public var parallelSafe: Bool
    public var planning: Bool
    public var acting: Bool

    public init(name: String, description: String, inputSchemaJSON: String, readOnly: Bool,
                parallelSafe: Bool, planning: Bool = true, acting: Bool = true) {
        self.name = name
        self.description = description
        self.inputSchemaJSON = inputSchemaJSON
        self.readOnly = readOnly
        self.parallelSafe = parallelSafe
        self.planning = planning
        self.acting = acting
    }

    public var spec: ToolSpec { ToolSpec(name: name, description: description, inputSchemaJSON: inputSchemaJSON) }
}

/// How one tool call ended, before it becomes a `.toolResult` for the model.
public enum RunToolOutcome: Sendable, Equatable {
    /// The tool's JSON result.
    case result(String)
    /// The tool (or the host's schema check) refused or failed; the text says why, for the model.
    case error(String)
    /// It was cancelled while it ran: it may have partly run.
    case cancelled
}

/// Runs tool calls for the engine: the plugin's side is termhost.tools/1. `call` blocks until
/// the call ends and may be called from several threads at once (for parallel-safe batches).
/// `cancel` asks a running call to stop soon and must not wait for it.
public protocol RunToolRunner: Sendable {
    func call(_ call: ToolCall, tool: RunTool, number: UInt64) -> RunToolOutcome
    func cancel(number: UInt64)
}

/// Whether one call may run: the policy gate, which may ask the person at the terminal (so the
/// engine calls it once per call, in the model's order, never concurrently).
public enum RunCallDecision: Sendable, Equatable {
    case run
    /// Refused; the text tells the model why and how a person could allow it.
    case refuse(String)
}
