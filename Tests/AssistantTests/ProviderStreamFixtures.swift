import AssistantCore
@testable import AssistantProviders

/// One recorded-shape response stream per wire format, each with text (a scalar of two and one of
/// three UTF-8 bytes, so a split lands inside one), tool-call argument fragments and keep-alives,
/// and the events it must decode to.
struct StreamFixture: Sendable {
    var kind: ProviderConfig.Kind
    var body: String
    var events: [ModelEvent]

    func decoder() -> any ResponseStreamDecoder {
        switch kind {
        case .openAIChat, .openAICompatible: ChatCompletionsDecoder(idPrefix: "call_local_")
        case .openAIResponses: ResponsesDecoder()
        case .anthropic: AnthropicDecoder()
        }
    }

    static let df = #"{"host":"web1","command":"df -h"}"#

    /// Two calls whose fragments interleave (index 1 starts before index 0 is complete), a comment
    /// line, and a usage chunk after finish_reason.
    static let chat = StreamFixture(kind: .openAIChat, body: #"""
    : keep-alive

    data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Check"},"finish_reason":null}]}

    data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"ing é✓."},"finish_reason":null}]}

    data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"ssh_exec","arguments":""}}]},"finish_reason":null}]}

    data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"get_metrics","arguments":"{\"ho"}}]},"finish_reason":null}]}

    data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"host\":\"we"}}]},"finish_reason":null}]}

    : still thinking

    data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"st\":\"db\"}"}}]},"finish_reason":null}]}

    data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"b1\",\"command\":\"df -h\"}"}}]},"finish_reason":null}]}

    data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

    data: {"id":"c1","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70}}

    data: [DONE]


    """#, events: [
        .textDelta("Check"), .textDelta("ing é✓."),
        .toolCall(ToolCall(id: "call_1", name: "ssh_exec", argumentsJSON: df)),
        .toolCall(ToolCall(id: "call_2", name: "get_metrics", argumentsJSON: #"{"host":"db"}"#)),
        .finished(reason: "tool_calls"),
    ])

    /// llama.cpp's shape: the whole call in one chunk, no `id`, and `finish_reason: "stop"`.
    static let local = StreamFixture(kind: .openAICompatible, body: #"""
    data: {"choices":[{"index":0,"delta":{"role":"assistant","content":null}}]}

    data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"type":"function","function":{"name":"ssh_exec","arguments":"{\"host\":\"web1\",\"command\":\"df -h\"}"}}]}}]}

    data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

    data: [DONE]


    """#, events: [
        .toolCall(ToolCall(id: "call_local_0", name: "ssh_exec", argumentsJSON: df)),
        .finished(reason: "tool_calls"),
    ])

    static let responses = StreamFixture(kind: .openAIResponses, body: #"""
    event: response.created
    data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress"}}

    event: response.output_item.added
    data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","content":[]}}

    event: response.output_text.delta
    data: {"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Checking é✓."}

    event: response.reasoning_summary_text.delta
    data: {"type":"response.reasoning_summary_text.delta","sequence_number":3,"delta":"ignored"}

    event: response.output_item.added
    data: {"type":"response.output_item.added","sequence_number":4,"output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"ssh_exec","arguments":""}}

    event: response.function_call_arguments.delta
    data: {"type":"response.function_call_arguments.delta","sequence_number":5,"item_id":"fc_1","output_index":1,"delta":"{\"host\":\"we"}

    event: response.function_call_arguments.delta
    data: {"type":"response.function_call_arguments.delta","sequence_number":6,"item_id":"fc_1","output_index":1,"delta":"b1\",\"command\":\"df -h\"}"}

    event: response.function_call_arguments.done
    data: {"type":"response.function_call_arguments.done","sequence_number":7,"item_id":"fc_1","output_index":1,"arguments":"{\"host\":\"web1\",\"command\":\"df -h\"}"}

    event: response.output_item.done
    data: {"type":"response.output_item.done","sequence_number":8,"output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"ssh_exec","arguments":"{\"host\":\"web1\",\"command\":\"df -h\"}","status":"completed"}}

    event: response.completed
    data: {"type":"response.completed","sequence_number":9,"response":{"id":"resp_1","status":"completed","output":[]}}


    """#, events: [
        .textDelta("Checking é✓."),
        .toolCall(ToolCall(id: "call_1", name: "ssh_exec", argumentsJSON: df)),
        .finished(reason: "tool_calls"),
    ])

    static let anthropic = StreamFixture(kind: .anthropic, body: #"""
    event: message_start
    data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"stop_reason":null,"usage":{"input_tokens":50,"output_tokens":1}}}

    event: content_block_start
    data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

    event: ping
    data: {"type": "ping"}

    event: content_block_delta
    data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Checking é✓."}}

    event: content_block_stop
    data: {"type":"content_block_stop","index":0}

    event: content_block_start
    data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"ssh_exec","input":{}}}

    event: content_block_delta
    data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"host\":\"we"}}

    event: content_block_delta
    data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"b1\",\"command\":\"df -h\"}"}}

    event: content_block_stop
    data: {"type":"content_block_stop","index":1}

    event: message_delta
    data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}}

    event: message_stop
    data: {"type":"message_stop"}


    """#, events: [
        .textDelta("Checking é✓."),
        .toolCall(ToolCall(id: "toolu_1", name: "ssh_exec", argumentsJSON: df)),
        .finished(reason: "tool_use"),
    ])

    static let all = [chat, local, responses, anthropic]

    /// A stream of this format that is a plain text answer, for retry tests.
    static func hello(_ kind: ProviderConfig.Kind) -> String {
        switch kind {
        case .openAIChat, .openAICompatible:
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hello\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
        case .openAIResponses:
            "data: {\"type\":\"response.output_text.delta\",\"delta\":\"hello\"}\n\ndata: {\"type\":\"response.completed\",\"response\":{}}\n\n"
        case .anthropic:
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello\"}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
        }
    }

    static func helloEvents(_ kind: ProviderConfig.Kind) -> [ModelEvent] {
        [.textDelta("hello"), .finished(reason: kind == .anthropic ? "end_turn" : "stop")]
    }
}
