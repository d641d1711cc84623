#if canImport(AssistantCore)
import AssistantCore   // the fuzz target compiles ModelConversation.swift in instead
#endif
import Foundation
#if canImport(TermhostSDK)
import TermhostSDK     // JSONText; the fuzz target compiles it in
#endif

/// One provider API: where requests go, what they look like, and how its stream reads back.
protocol WireFormat: Sendable {
    /// Appended to the configured base URL ("/chat/completions").
    var path: String { get }
    /// Request headers; `apiKey` goes into exactly one of them and nowhere else.
    func headers(apiKey: String?) -> [String]
    func body(system: String, messages: [ChatMessage], tools: [ToolSpec]) -> String
    func makeDecoder() -> any ResponseStreamDecoder
}

/// Turns a provider's server-sent events into ModelEvents, one event at a time. `isFinished`
/// turns true at the format's terminal marker (`data: [DONE]`, `message_stop`,
/// `response.completed`); a stream that ends before it is a transport failure.
protocol ResponseStreamDecoder {
    var isFinished: Bool { get }
    /// The events `event` completes. Throws `.malformed` for text that is not the format, and
    /// `.provider(type:)` for an error event.
    mutating func decode(_ event: SSEEvent) throws(ModelError) -> [ModelEvent]
}

/// The tool-call IDs of one response: results are matched to calls by ID, so a response that
/// names two calls alike (a faulty server, or a hostile one) is malformed.
struct ToolCallIDs {
    private var seen = Set<String>()

    mutating func admit(_ call: ToolCall) throws(ModelError) -> ModelEvent {
        guard seen.insert(call.id).inserted else {
            throw ModelError(.malformed, "the response has two tool calls with the ID '\(call.id)'")
        }
        return .toolCall(call)
    }
}

/// A decoded JSON object from a provider, read with JSONSerialization (Foundation's parser).
struct JSONObject {
    let fields: [String: Any]

    init(_ fields: [String: Any]) { self.fields = fields }

    /// Parses `text`, which must be one JSON object; `what` names it in the error.
    init(parsing text: String, what: String) throws(ModelError) {
        guard let value = try? JSONSerialization.jsonObject(with: Data(text.utf8)), let object = value as? [String: Any] else {
            throw ModelError(.malformed, "\(what) is not a JSON object: \(text.prefix(120))")
        }
        fields = object
    }

    subscript(object key: String) -> JSONObject? { (fields[key] as? [String: Any]).map(JSONObject.init) }
    subscript(string key: String) -> String? { fields[key] as? String }
    subscript(int key: String) -> Int? { (fields[key] as? NSNumber).flatMap { Int(exactly: $0.doubleValue) } }
    subscript(objects key: String) -> [JSONObject] {
        (fields[key] as? [Any] ?? []).compactMap { ($0 as? [String: Any]).map(JSONObject.init) }
    }
}

/// Request bodies are written by hand: strings through the SDK's JSON quoter, and the tools'
/// JSON Schemas spliced in as they are (the catalog already checked that each is an object).
extension String {
    static func json(_ s: String) -> String { JSONText.quoted(s) }
}

/// Whether `text` is one JSON object: tool arguments are echoed as an object where a format
/// wants one (Anthropic's `input`), and an empty object stands in for anything else.
func jsonObjectText(_ text: String) -> String {
    guard let value = try? JSONSerialization.jsonObject(with: Data(text.utf8)), value is [String: Any] else { return "{}" }
    return text
}
