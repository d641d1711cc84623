import AssistantCore
import Synchronization
import Testing

/// The reviewer's answer rule and its failure modes. The provider here speaks no HTTP: it
/// stands for the model only to test the pure rule; the wire formats are the providers' tests.
@Suite struct ModelReviewerTests {
    final class Answering: ModelProvider {
        let events: [ModelEvent]
        let error: ModelError?
        let hangs: Bool
        let seen = Mutex([String]())

        init(events: [ModelEvent], error: ModelError? = nil, hangs: Bool = false) {
            self.events = events
            self.error = error
            self.hangs = hangs
        }

        func stream(system: String, messages: [ChatMessage], tools: [ToolSpec], isCancelled: @Sendable () -> Bool,
                    onEvent: (ModelEvent) -> Void) throws(ModelError) {
            seen.withLock { $0.append(system + "\n" + messages.map { "\($0)" }.joined()) }
            precondition(tools.isEmpty, "the reviewer is tool-free")
            if hangs {
                while !isCancelled() { ModelReviewerTests.spin() }
                throw ModelError(.cancelled, "cancelled")
            }
            if let error { throw error }
            for event in events { onEvent(event) }
        }
    }

    static func spin() { _ = (0..<1000).reduce(0, +) }

    let request = ApprovalRequest(tool: "ssh_exec", host: "web-2", command: "systemctl restart nginx",
                                  workingDirectory: nil, argumentsJSON: "{}", reason: "ask", family: "systemctl restart")

    static let answers: [(String, ReviewVerdict)] = [
        (#"{"decision":"approve","reason":"asked for"}"#, .approve(reason: "asked for")),
        (" \n{\"reason\":\"drops the database\",\"decision\":\"deny\"}\n", .deny(reason: "drops the database")),
        (#"Sure! {"decision":"approve","reason":"x"}"#, .unavailable(reason: "malformed review: the answer is not one JSON object")),
        ("```json\n{\"decision\":\"approve\",\"reason\":\"x\"}\n```", .unavailable(reason: "malformed review: the answer is not one JSON object")),
        (#"{"decision":"approve","reason":"x"}{"decision":"deny","reason":"y"}"#, .unavailable(reason: "malformed review: the answer is not one JSON object")),
        (#"{"decision":"approve"}"#, .unavailable(reason: "inconsistent review: expected exactly the keys decision and reason")),
        (#"{"decision":"approve","reason":"x","confidence":0.2}"#, .unavailable(reason: "inconsistent review: expected exactly the keys decision and reason")),
        (#"{"decision":"approve","reason":"  "}"#, .unavailable(reason: "inconsistent review: no reason given")),
        (#"{"decision":"yes","reason":"x"}"#, .unavailable(reason: "inconsistent review: decision must be \"approve\" or \"deny\"")),
        (#"{"decision":true,"reason":"x"}"#, .unavailable(reason: "inconsistent review: decision must be \"approve\" or \"deny\"")),
        ("", .unavailable(reason: "malformed review: the answer is not one JSON object")),
    ]

    @Test(arguments: answers) func onlyTheFixedSchemaDecides(_ text: String, _ verdict: ReviewVerdict) {
        #expect(ModelReviewer.verdict(fromAnswer: text) == verdict)
    }

    @Test func theReviewerSeesTheRequestAndTheActionAndStreamsAnApproval() {
        let provider = Answering(events: [.textDelta(#"{"decision":"appr"#), .textDelta(#"ove","reason":"asked"}"#), .finished(reason: "stop")])
        #expect(ModelReviewer(provider: provider, task: "restart nginx on web-2").review(request) == .approve(reason: "asked"))
        let seen = provider.seen.withLock { $0.joined() }
        #expect(seen.contains("restart nginx on web-2") && seen.contains("command: systemctl restart nginx"))
    }

    @Test func aToolCallOrAnUnfinishedAnswerIsNoDecision() {
        let calling = Answering(events: [.toolCall(ToolCall(id: "c", name: "ssh_exec", argumentsJSON: "{}")),
                                         .textDelta(#"{"decision":"approve","reason":"x"}"#), .finished(reason: "tool_calls")])
        #expect(ModelReviewer(provider: calling, task: "t").review(request) == .unavailable(reason: "inconsistent review: the reviewer called a tool"))
        let cut = Answering(events: [.textDelta(#"{"decision":"approve","reason":"x"}"#)])
        #expect(ModelReviewer(provider: cut, task: "t").review(request) == .unavailable(reason: "malformed review: the answer did not finish"))
    }

    @Test func aFailedOrSlowReviewIsUnavailableNotADenial() {
        let failing = Answering(events: [], error: ModelError(.http(status: 503), "HTTP 503 from the provider"))
        #expect(ModelReviewer(provider: failing, task: "t").review(request)
                == .unavailable(reason: "the reviewer's model request failed: HTTP 503 from the provider"))
        let slow = Answering(events: [], hangs: true)
        let started = ContinuousClock.now
        #expect(ModelReviewer(provider: slow, task: "t", timeout: .milliseconds(200)).review(request)
                == .unavailable(reason: "the reviewer did not answer within 0.2 seconds"))
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}
