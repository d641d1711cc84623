#if canImport(AssistantCore)
import AssistantCore   // the fuzz target compiles ModelConversation.swift in instead
#endif

/// Anthropic Messages (`POST /messages`). System text goes in the top-level `system` field (the
/// transcript's system entries joined to it); tool calls are `tool_use` blocks of the assistant's
/// turn, and the results that follow it one user turn of `tool_result` blocks.
struct AnthropicWire: WireFormat {
    let model: String
    let version: String
    let maxTokens: Int

    var path: String { "/messages" }

    func headers(apiKey: String?) -> [String] {
        var headers = ["Content-Type: application/json", "Accept: text/event-stream", "anthropic-version: \(version)"]
        if let apiKey, !apiKey.isEmpty { headers.append("x-api-key: \(apiKey)") }
        return headers
    }

    func body(system: String, messages: [ChatMessage], tools: [ToolSpec]) -> String {
        var systemParts = system.isEmpty ? [] : [system]
        var turns: [String] = []
        var results: [String] = []
        func flushResults() {
            if !results.isEmpty { turns.append(#"{"role":"user","content":["# + results.joined(separator: ",") + "]}") }
            results = []
        }
        for message in messages {
            if case .toolResult(let id, let content, let isError) = message {
                results.append(#"{"type":"tool_result","tool_use_id":\#(String.json(id)),"content":\#(String.json(content)),"is_error":\#(isError)}"#)
                continue
            }
            flushResults()
            switch message {
            case .system(let text): systemParts.append(text)
            case .user(let text): turns.append(#"{"role":"user","content":\#(String.json(text))}"#)
            case .assistant(let text, let calls):
                var blocks = text.isEmpty ? [] : [#"{"type":"text","text":\#(String.json(text))}"#]
                blocks += calls.map { call in
                    #"{"type":"tool_use","id":\#(String.json(call.id)),"name":\#(String.json(call.name)),"input":\#(jsonObjectText(call.argumentsJSON))}"#
                }
                turns.append(#"{"role":"assistant","content":["# + blocks.joined(separator: ",") + "]}")
            case .toolResult: break
            }
        }
        flushResults()
        var body = #"{"model":\#(String.json(model)),"max_tokens":\#(maxTokens),"stream":true"#
        if !systemParts.isEmpty { body += #","system":\#(String.json(systemParts.joined(separator: "\n\n")))"# }
        body += #","messages":["# + turns.joined(separator: ",") + "]"
        if !tools.isEmpty {
            body += #","tools":["# + tools.map { tool in
                #"{"name":\#(String.json(tool.name)),"description":\#(String.json(tool.description)),"input_schema":\#(tool.inputSchemaJSON)}"#
            }.joined(separator: ",") + "]"
        }
        return body + "}"
    }

    func makeDecoder() -> any ResponseStreamDecoder { AnthropicDecoder() }
}

/// `message_start`, then per content block `content_block_start` / `_delta` / `_stop`, then
/// `message_delta` (the stop reason) and `message_stop`. Text blocks stream as `text_delta`; a
/// `tool_use` block's input streams as `input_json_delta` fragments and is reported whole at its
/// `content_block_stop`. `ping` and unknown block or delta types (thinking) are skipped; an
/// `error` event (`overloaded_error` and the like) is thrown.
struct AnthropicDecoder: ResponseStreamDecoder {
    private struct PendingCall { var id: String; var name: String; var input = "" }
    private var calls: [Int: PendingCall] = [:]
    private var stopReason: String?
    private var ids = ToolCallIDs()
    private(set) var isFinished = false

    mutating func decode(_ event: SSEEvent) throws(ModelError) -> [ModelEvent] {
        let data = try JSONObject(parsing: event.data, what: "a Messages event")
        switch data[string: "type"] ?? event.type {
        case "content_block_start":
            guard let index = data[int: "index"], let block = data[object: "content_block"] else { break }
            if block[string: "type"] == "tool_use" {
                calls[index] = PendingCall(id: block[string: "id"] ?? "toolu_\(index)", name: block[string: "name"] ?? "")
            } else if block[string: "type"] == "text", let text = block[string: "text"], !text.isEmpty {
                return [.textDelta(text)]
            }
        case "content_block_delta":
            guard let index = data[int: "index"], let delta = data[object: "delta"] else { break }
            switch delta[string: "type"] {
            case "text_delta": if let text = delta[string: "text"], !text.isEmpty { return [.textDelta(text)] }
            case "input_json_delta": calls[index]?.input += delta[string: "partial_json"] ?? ""
            default: break
            }
        case "content_block_stop":
            if let index = data[int: "index"], let call = calls.removeValue(forKey: index) {
                return [try ids.admit(ToolCall(id: call.id, name: call.name, argumentsJSON: call.input.isEmpty ? "{}" : call.input))]
            }
        case "message_delta":
            if let reason = data[object: "delta"]?[string: "stop_reason"] { stopReason = reason }
        case "message_stop":
            isFinished = true
            return [.finished(reason: stopReason ?? "end_turn")]
        case "error":
            let error = data[object: "error"]
            throw ModelError(.provider(type: error?[string: "type"] ?? "error"), error?[string: "message"] ?? "error event without a message")
        default: break
        }
        return []
    }
}
