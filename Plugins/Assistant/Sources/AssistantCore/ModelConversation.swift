// The conversation as every model provider sees it, independent of wire format. The run engine
// keeps a transcript of these; each provider (OpenAI Chat Completions, OpenAI Responses,
// Anthropic Messages, OpenAI-compatible local servers) turns it into its request body and its
// streamed response back into ModelEvents.

/// One tool call the model asked for. `argumentsJSON` is the model's text, unvalidated: the
/// host checks it against the tool's schema before anything runs.
public struct ToolCall: Sendable, Equatable {
    /// The provider's ID for the call (OpenAI "call_…", Anthropic "toolu_…"); results name it.
    public var id: String
    public var name: String
    public var argumentsJSON: String

    public init(id: String, name: String, argumentsJSON: String) {
        self.id = id
        self.name = name
        self.argumentsJSON = argumentsJSON
    }
}

/// One entry of the transcript.
public enum ChatMessage: Sendable, Equatable {
    case system(String)
    case user(String)
    /// The model's turn: its text (possibly empty) and the tool calls it made, in its order.
    case assistant(text: String, toolCalls: [ToolCall])
    /// The answer to one tool call. `isError` marks a refusal, a failure, a cancellation or an
    /// unknown outcome; the text says which, for the model.
    case toolResult(callID: String, content: String, isError: Bool)
}

/// A tool as offered to the model: the catalog entry's name, description and JSON Schema.
public struct ToolSpec: Sendable, Equatable {
    public var name: String
    public var description: String
    public var inputSchemaJSON: String

    public init(name: String, description: String, inputSchemaJSON: String) {
        self.name = name
        self.description = description
        self.inputSchemaJSON = inputSchemaJSON
    }
}

/// What a provider reports while a response streams, in order.
public enum ModelEvent: Sendable, Equatable {
    /// A piece of the answer's text, to show as it arrives.
    case textDelta(String)
    /// A complete tool call (its argument fragments already joined).
    case toolCall(ToolCall)
    /// The response ended normally; `reason` is the provider's stop reason ("stop",
    /// "tool_calls", "end_turn", …). Nothing follows it.
    case finished(reason: String)
}

/// Why a model request failed, after the provider's retries.
public struct ModelError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case cancelled
        case transport        // connection, TLS, DNS, or a stream that ended without its marker
        case http(status: Int) // a status that is not retried, or retries ran out
        case provider(type: String) // an error event inside a streamed response ("overloaded_error")
        case quotaExhausted   // a 429 that means the account's money or quota ran out
        case malformed        // the response was not the wire format it claims
        case tooLarge         // buffered response over its cap
    }

    public var kind: Kind
    /// For the user; provider text is untrusted and must be made visible before printing.
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// A model endpoint. `stream` sends the whole transcript with the tools and reports events
/// through `onEvent` (on the calling thread) until `.finished`, or throws `ModelError`. It
/// returns promptly with `.cancelled` once `isCancelled()` turns true. A retry of a failed
/// request resends the same transcript; it never replays a tool call.
public protocol ModelProvider: Sendable {
    func stream(system: String, messages: [ChatMessage], tools: [ToolSpec],
                isCancelled: @Sendable () -> Bool,
                onEvent: (ModelEvent) -> Void) throws(ModelError)
}

extension Array where Element == ChatMessage {
    /// The tool calls of this transcript that have no result yet, in the model's order. A run
    /// that stopped (crash, Ctrl-C, shutdown) answers each with an explicit result before the
    /// transcript is sent again, so the model never assumes a call did not run.
    public var unansweredToolCalls: [ToolCall] {
        var answered = Set<String>()
        for case let .toolResult(callID, _, _) in self { answered.insert(callID) }
        var open: [ToolCall] = []
        for case let .assistant(_, calls) in self {
            open.append(contentsOf: calls.filter { !answered.contains($0.id) })
        }
        return open
    }
}
