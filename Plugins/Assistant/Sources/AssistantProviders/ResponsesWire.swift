#if canImport(AssistantCore)
import AssistantCore   // the fuzz target compiles ModelConversation.swift in instead
#endif

/// OpenAI Responses (`POST /responses`), stateless (`store: false`): the whole transcript is sent
/// as input items each time, tool calls as `function_call` items and results as
/// `function_call_output` items.
struct ResponsesWire: WireFormat {
    let model: String
    let organization: String?

    var path: String { "/responses" }

    func headers(apiKey: String?) -> [String] {
        var headers = ["Content-Type: application/json", "Accept: text/event-stream"]
        if let apiKey, !apiKey.isEmpty { headers.append("Authorization: Bearer \(apiKey)") }
        if let organization { headers.append("OpenAI-Organization: \(organization)") }
        return headers
    }

    func body(system: String, messages: [ChatMessage], tools: [ToolSpec]) -> String {
        var items: [String] = []
        for message in messages {
            switch message {
            case .system(let text): items.append(#"{"role":"system","content":\#(String.json(text))}"#)
            case .user(let text): items.append(#"{"role":"user","content":\#(String.json(text))}"#)
            case .assistant(let text, let calls):
                if !text.isEmpty { items.append(#"{"role":"assistant","content":\#(String.json(text))}"#) }
                for call in calls {
                    items.append(#"{"type":"function_call","call_id":\#(String.json(call.id)),"name":\#(String.json(call.name)),"arguments":\#(String.json(call.argumentsJSON))}"#)
                }
            case .toolResult(let id, let content, _):
                items.append(#"{"type":"function_call_output","call_id":\#(String.json(id)),"output":\#(String.json(content))}"#)
            }
        }
        var body = #"{"model":\#(String.json(model)),"stream":true,"store":false"#
        if !system.isEmpty { body += #","instructions":\#(String.json(system))"# }
        body += #","input":["# + items.joined(separator: ",") + "]"
        if !tools.isEmpty {
            body += #","tools":["# + tools.map { tool in
                #"{"type":"function","name":\#(String.json(tool.name)),"description":\#(String.json(tool.description)),"parameters":\#(tool.inputSchemaJSON)}"#
            }.joined(separator: ",") + "]"
        }
        return body + "}"
    }

    func makeDecoder() -> any ResponseStreamDecoder { ResponsesDecoder() }
}

/// Typed events (`type` in each data object; no `[DONE]`). Text comes from
/// `response.output_text.delta`; a function call opens with `response.output_item.added`, grows
/// by `response.function_call_arguments.delta` and is reported whole at
/// `response.output_item.done`. The stream ends with `response.completed` or
/// `response.incomplete` (finished), or `response.failed` / `error` (thrown). Other events
/// (reasoning summaries, content parts, usage) are ignored.
struct ResponsesDecoder: ResponseStreamDecoder {
    private struct PendingCall { var callID: String; var name: String; var arguments: String }
    private var calls: [String: PendingCall] = [:]   // by item ID
    private var order: [String] = []
    private var reported = Set<String>()
    private var ids = ToolCallIDs()
    private(set) var isFinished = false

    mutating func decode(_ event: SSEEvent) throws(ModelError) -> [ModelEvent] {
        let data = try JSONObject(parsing: event.data, what: "a Responses event")
        switch data[string: "type"] ?? event.type {
        case "response.output_text.delta":
            if let delta = data[string: "delta"], !delta.isEmpty { return [.textDelta(delta)] }
        case "response.output_item.added":
            if let item = data[object: "item"], item[string: "type"] == "function_call", let id = item[string: "id"] {
                calls[id] = PendingCall(callID: item[string: "call_id"] ?? id, name: item[string: "name"] ?? "",
                                        arguments: item[string: "arguments"] ?? "")
                order.append(id)
            }
        case "response.function_call_arguments.delta":
            if let id = data[string: "item_id"] { calls[id]?.arguments += data[string: "delta"] ?? "" }
        case "response.function_call_arguments.done":
            if let id = data[string: "item_id"], let arguments = data[string: "arguments"] { calls[id]?.arguments = arguments }
        case "response.output_item.done":
            if let item = data[object: "item"], item[string: "type"] == "function_call", let id = item[string: "id"] {
                if calls[id] == nil { order.append(id) }
                calls[id] = PendingCall(callID: item[string: "call_id"] ?? calls[id]?.callID ?? id,
                                        name: item[string: "name"] ?? calls[id]?.name ?? "",
                                        arguments: item[string: "arguments"] ?? calls[id]?.arguments ?? "")
                return try report(id)
            }
        case "response.completed":
            isFinished = true
            var events: [ModelEvent] = []
            for id in order { events += try report(id) }
            return events + [.finished(reason: order.isEmpty ? "stop" : "tool_calls")]
        case "response.incomplete":
            isFinished = true
            let reason = data[object: "response"]?[object: "incomplete_details"]?[string: "reason"] ?? "incomplete"
            var events: [ModelEvent] = []
            for id in order { events += try report(id) }
            return events + [.finished(reason: reason)]
        case "response.failed":
            let error = data[object: "response"]?[object: "error"]
            throw ModelError(.provider(type: error?[string: "code"] ?? "response.failed"), error?[string: "message"] ?? "the response failed")
        case "error":
            let error = data[object: "error"] ?? data
            throw ModelError(.provider(type: error[string: "code"] ?? error[string: "type"] ?? "error"),
                             error[string: "message"] ?? "error event without a message")
        default: break
        }
        return []
    }

    private mutating func report(_ id: String) throws(ModelError) -> [ModelEvent] {
        guard let call = calls[id], reported.insert(id).inserted else { return [] }
        return [try ids.admit(ToolCall(id: call.callID, name: call.name, argumentsJSON: call.arguments.isEmpty ? "{}" : call.arguments))]
    }
}
