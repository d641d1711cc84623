import AssistantCore
import Testing

@Suite struct ModelConversationTests {
    @Test func callsWithoutAResultAreTheOnesStillOpenInTheModelsOrder() {
        let a = ToolCall(id: "a", name: "ssh_exec", argumentsJSON: "{}")
        let b = ToolCall(id: "b", name: "get_metrics", argumentsJSON: "{}")
        let c = ToolCall(id: "c", name: "sftp_read", argumentsJSON: "{}")
        let transcript: [ChatMessage] = [
            .user("why is disk full on web-2?"),
            .assistant(text: "", toolCalls: [a, b]),
            .toolResult(callID: "b", content: "{}", isError: false),
            .assistant(text: "and", toolCalls: [c]),
        ]
        #expect(transcript.unansweredToolCalls == [a, c])
        let answered = transcript + [.toolResult(callID: "a", content: "x", isError: true),
                                     .toolResult(callID: "c", content: "y", isError: false)]
        #expect(answered.unansweredToolCalls.isEmpty)
    }
}
