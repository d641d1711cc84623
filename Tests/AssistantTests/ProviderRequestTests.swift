import AssistantCore
import AssistantProviders
import Foundation
import Testing
import TestSupport

/// The request each format sends for one transcript, as the scripted server received it.
@Suite struct ProviderRequestTests {
    static let transcript: [ChatMessage] = [
        .user("disk on web1?"),
        .assistant(text: "Checking.", toolCalls: [ToolCall(id: "call_1", name: "ssh_exec", argumentsJSON: StreamFixture.df)]),
        .toolResult(callID: "call_1", content: "/dev/sda1 91%", isError: false),
        .user("and \"db\"?\n"),
    ]
    static let tools = [ToolSpec(name: "ssh_exec", description: "Run a command",
                                 inputSchemaJSON: #"{"type":"object","properties":{"host":{"type":"string"}},"required":["host"]}"#)]

    func send(_ kind: ProviderConfig.Kind) throws -> (ScriptedHTTPServer.Request, [String: Any]) {
        let server = ScriptedHTTPServer(script: [.init(body: StreamFixture.hello(kind))])
        defer { server.stop() }
        let run = ProviderRun.collect(try ProviderRun.provider(kind, server), messages: Self.transcript, tools: Self.tools)
        #expect(run.error == nil)
        let request = try #require(server.requests.first)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body.utf8)) as? [String: Any])
        return (request, body)
    }

    /// `value` as canonical JSON text, for comparing structures.
    func canonical(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]), as: UTF8.self)
    }

    @Test func chatCompletions() throws {
        let (request, body) = try send(.openAIChat)
        #expect(request.requestLine == "POST /v1/chat/completions HTTP/1.1")
        #expect(body["model"] as? String == "test-model" && body["stream"] as? Bool == true)
        #expect(try canonical(body["messages"]!) == canonical(try JSONSerialization.jsonObject(with: Data(#"""
        [{"role":"system","content":"You operate hosts."},{"role":"user","content":"disk on web1?"},
         {"role":"assistant","content":"Checking.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"ssh_exec","arguments":"{\"host\":\"web1\",\"command\":\"df -h\"}"}}]},
         {"role":"tool","tool_call_id":"call_1","content":"/dev/sda1 91%"},{"role":"user","content":"and \"db\"?\n"}]
        """#.utf8))))
        #expect(request.body.contains(#""parameters":{"type":"object","properties":{"host":{"type":"string"}},"required":["host"]}"#), "the schema goes as it is")
        #expect(body["stream_options"] != nil)
    }

    @Test func localServersGetNoStreamOptionsAndNoKeyWhenThereIsNone() throws {
        let server = ScriptedHTTPServer(script: [.init(body: StreamFixture.hello(.openAICompatible))])
        defer { server.stop() }
        _ = ProviderRun.collect(try ProviderRun.provider(.openAICompatible, server, apiKey: nil))
        let request = try #require(server.requests.first)
        #expect(request.header("Authorization") == nil)
        #expect(!request.body.contains("stream_options"))
    }

    @Test func responses() throws {
        let (request, body) = try send(.openAIResponses)
        #expect(request.requestLine == "POST /v1/responses HTTP/1.1")
        #expect(body["instructions"] as? String == "You operate hosts." && body["store"] as? Bool == false)
        #expect(try canonical(body["input"]!) == canonical(try JSONSerialization.jsonObject(with: Data(#"""
        [{"role":"user","content":"disk on web1?"},{"role":"assistant","content":"Checking."},
         {"type":"function_call","call_id":"call_1","name":"ssh_exec","arguments":"{\"host\":\"web1\",\"command\":\"df -h\"}"},
         {"type":"function_call_output","call_id":"call_1","output":"/dev/sda1 91%"},{"role":"user","content":"and \"db\"?\n"}]
        """#.utf8))))
        #expect(request.body.contains(#"{"type":"function","name":"ssh_exec","description":"Run a command","parameters":{"type":"object""#))
    }

    @Test func anthropicMessages() throws {
        let (request, body) = try send(.anthropic)
        #expect(request.requestLine == "POST /v1/messages HTTP/1.1")
        #expect(request.header("anthropic-version") == "2023-06-01")
        #expect(body["system"] as? String == "You operate hosts." && body["max_tokens"] as? Int == 4096)
        #expect(try canonical(body["messages"]!) == canonical(try JSONSerialization.jsonObject(with: Data(#"""
        [{"role":"user","content":"disk on web1?"},
         {"role":"assistant","content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"call_1","name":"ssh_exec","input":{"host":"web1","command":"df -h"}}]},
         {"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"/dev/sda1 91%","is_error":false}]},
         {"role":"user","content":"and \"db\"?\n"}]
        """#.utf8))))
        #expect(request.body.contains(#""input_schema":{"type":"object","properties":{"host":{"type":"string"}},"required":["host"]}"#))
    }
}
