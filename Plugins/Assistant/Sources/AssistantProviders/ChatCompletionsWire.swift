#if canImport(AssistantCore)
import AssistantCore   // the fuzz target compiles ModelConversation.swift in instead
#endif
import Foundation

/// OpenAI Chat Completions (`POST /chat/completions`), also spoken by local servers (llama.cpp's
/// `llama-server`, Ollama's `/v1`). `local` drops what those servers lack or ignore: the API key
/// when there is none, and `stream_options`.
struct ChatCompletionsWire: WireFormat {
    let model: String
    let organization: String?
    let local: Bool

    var path: String { "/chat/completions" }

    func headers(apiKey: String?) -> [String] {
        var headers = ["Content-Type: application/json", "Accept: text/event-stream"]
        if let apiKey, !apiKey.isEmpty { headers.append("Authorization: Bearer \(apiKey)") }
        if let organization { headers.append("OpenAI-Organization: \(organization)") }
        return headers
    }

    func body(system: String, messages: [ChatMessage], tools: [ToolSpec]) -> String {
        var items: [String] = []
        if !system.isEmpty { items.append(#"{"role":"system","content":\#(String.json(system))}"#) }
        for message in messages {
            switch message {
            case .system(let text): items.append(#"{"role":"system","content":\#(String.json(text))}"#)
            case .user(let text): items.append(#"{"role":"user","content":\#(String.json(text))}"#)
            case .assistant(let text, let calls):
                var item = #"{"role":"assistant","content":\#(text.isEmpty ? "null" : String.json(text))"#
                if !calls.isEmpty {
                    item += #","tool_calls":["# + calls.map { call in
                        #"{"id":\#(String.json(call.id)),"type":"function","function":{"name":\#(String.json(call.name)),"arguments":\#(String.json(call.argumentsJSON))}}"#
                    }.joined(separator: ",") + "]"
                }
                items.append(item + "}")
            case .toolResult(let id, let content, _):
                items.append(#"{"role":"tool","tool_call_id":\#(String.json(id)),"content":\#(String.json(content))}"#)
            }
        }
        var body = #"{"model":\#(String.json(model)),"stream":true"#
        if !local { body += #","stream_options":{"include_usage":true}"# }
        body += #","messages":["# + items.joined(separator: ",") + "]"
        if !tools.isEmpty {
            body += #","tools":["# + tools.map { tool in
                #"{"type":"function","function":{"name":\#(String.json(tool.name)),"description":\#(String.json(tool.description)),"parameters":\#(tool.inputSchemaJSON)}}"#
            }.joined(separator: ",") + "]"
        }
        return body + "}"
    }

    func makeDecoder() -> any ResponseStreamDecoder { ChatCompletionsDecoder(idPrefix: "call_" + UUID().uuidString.prefix(8).lowercased() + "_") }
}

/// `data:` chunks of `chat.completion.chunk`, then `data: [DONE]`. Tool calls arrive as fragments
/// keyed by `index` (indices may interleave; `id` and `name` only in an index's first fragment,
/// or the whole call in one chunk from local servers, sometimes without an `id`); each call is
/// reported whole, in index order, once `finish_reason` or `[DONE]` arrives. Local servers may say
/// `finish_reason: "stop"` after tool calls; the calls still count.
struct ChatCompletionsDecoder: ResponseStreamDecoder {
    private struct PendingCall { var id: String?; var name = ""; var arguments = "" }
    private var calls: [Int: PendingCall] = [:]
    private var finishReason: String?
    private var callsReported = false
    private var ids = ToolCallIDs()
    private(set) var isFinished = false
    /// Names a call the server sent without an `id` (local servers): this prefix and its index,
    /// unique per response so two turns' calls never share an ID.
    let idPrefix: String

    init(idPrefix: String) { self.idPrefix = idPrefix }

    mutating func decode(_ event: SSEEvent) throws(ModelError) -> [ModelEvent] {
        if event.data == "[DONE]" {
            isFinished = true
            return try reportCalls() + [.finished(reason: finishReason ?? "stop")]
        }
        let chunk = try JSONObject(parsing: event.data, what: "a Chat Completions chunk")
        if let error = chunk[object: "error"] {
            throw ModelError(.provider(type: error[string: "type"] ?? error[string: "code"] ?? "error"),
                             error[string: "message"] ?? "error event without a message")
        }
        var events: [ModelEvent] = []
        for choice in chunk[objects: "choices"] where (choice[int: "index"] ?? 0) == 0 {
            if let delta = choice[object: "delta"] {
                if let text = delta[string: "content"], !text.isEmpty { events.append(.textDelta(text)) }
                for (position, fragment) in delta[objects: "tool_calls"].enumerated() {
                    let index = fragment[int: "index"] ?? position
                    var call = calls[index] ?? PendingCall()
                    if let id = fragment[string: "id"], !id.isEmpty { call.id = id }
                    if let function = fragment[object: "function"] {
                        if let name = function[string: "name"], !name.isEmpty { call.name = name }
                        call.arguments += function[string: "arguments"] ?? ""
                    }
                    calls[index] = call
                }
            }
            if let reason = choice[string: "finish_reason"] {
                finishReason = reason
                events += try reportCalls()
            }
        }
        return events
    }

    private mutating func reportCalls() throws(ModelError) -> [ModelEvent] {
        guard !callsReported else { return [] }
        callsReported = true
        if !calls.isEmpty, finishReason == nil || finishReason == "stop" { finishReason = "tool_calls" }
        var events: [ModelEvent] = []
        for index in calls.keys.sorted() {
            let call = calls[index]!
            events.append(try ids.admit(ToolCall(id: call.id ?? idPrefix + String(index), name: call.name,
                                                 argumentsJSON: call.arguments.isEmpty ? "{}" : call.arguments)))
        }
        return events
    }
}
