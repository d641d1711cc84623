import AssistantCore
@testable import AssistantProviders
import Foundation
import Testing
import TestSupport

/// Which failures are retried, how long the waits are, and what is never retried.
@Suite struct ProviderRetryTests {
    typealias Response = ScriptedHTTPServer.Response

    @Test func theStandardScheduleIsFiveRetriesAtOneTwoFourEightSixteenSeconds() {
        #expect(RetrySchedule.standard.delays == [1, 2, 4, 8, 16])
        #expect(RetrySchedule.standard.retryAfterCap == 60)
        #expect(ProviderOptions().retry == .standard)
        #expect(ProviderOptions().maxResponseBytes == 16 << 20)
    }

    @Test func retryAfterIsSecondsOrAnHTTPDateAndIsCapped() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)   // Tue, 14 Nov 2023 22:13:20 GMT
        let schedule = RetrySchedule.standard
        #expect(schedule.delay(beforeRetry: 0, retryAfter: "3", now: now) == 3)
        #expect(schedule.delay(beforeRetry: 2, retryAfter: "3", now: now) == 4, "retry-after is a floor under the schedule")
        #expect(schedule.delay(beforeRetry: 0, retryAfter: "Tue, 14 Nov 2023 22:13:30 GMT", now: now) == 10)
        #expect(schedule.delay(beforeRetry: 0, retryAfter: "Tue, 14 Nov 2023 22:00:00 GMT", now: now) == 1, "a past date")
        #expect(schedule.delay(beforeRetry: 0, retryAfter: "86400", now: now) == 60)
        #expect(schedule.delay(beforeRetry: 0, retryAfter: "99999999999999999999", now: now) == 60)
        #expect(schedule.delay(beforeRetry: 0, retryAfter: "soon", now: now) == 1)
        #expect(schedule.delay(beforeRetry: 0, retryAfter: "-5", now: now) == 1)
    }

    @Test func a429WithRetryAfterIsRetriedAfterTheWait() throws {
        let server = ScriptedHTTPServer(script: [
            Response(status: 429, headers: ["Retry-After: 1", "Content-Type: application/json"],
                     body: #"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#),
            Response(body: StreamFixture.hello(.openAIChat)),
        ])
        defer { server.stop() }
        let run = ProviderRun.collect(try ProviderRun.provider(.openAIChat, server))
        #expect(run.error == nil)
        #expect(run.events == StreamFixture.helloEvents(.openAIChat))
        let requests = server.requests
        #expect(requests.count == 2)
        if requests.count == 2 {
            #expect(requests[1].receivedAt - requests[0].receivedAt >= .milliseconds(990), "the schedule says 10 ms; retry-after 1 s wins")
            #expect(requests[1].body == requests[0].body, "a retry resends the same request")
        }
    }

    @Test(arguments: [408, 409, 500, 502, 503, 504, 529])
    func aTransientStatusIsRetried(_ status: Int) throws {
        let server = ScriptedHTTPServer(script: [
            Response(status: status, headers: [], body: #"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#),
            Response(body: StreamFixture.hello(.anthropic)),
        ])
        defer { server.stop() }
        let run = ProviderRun.collect(try ProviderRun.provider(.anthropic, server))
        #expect(run.error == nil)
        #expect(run.events == StreamFixture.helloEvents(.anthropic))
        #expect(server.requests.count == 2)
    }

    @Test func retriesRunOutAfterFiveWithTheLastStatus() throws {
        let server = ScriptedHTTPServer(script: Array(repeating: Response(status: 529, headers: [],
            body: #"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#), count: 7))
        defer { server.stop() }
        let run = ProviderRun.collect(try ProviderRun.provider(.anthropic, server))
        #expect(run.error?.kind == .http(status: 529))
        #expect(run.error?.message == "provider 'scripted' (\(server.baseURL)/messages): HTTP 529: Overloaded (after 6 attempts)")
        #expect(server.requests.count == 6)
    }

    @Test(arguments: [
        #"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
        #"{"type":"error","error":{"type":"rate_limit_error","message":"Spend limit reached","details":{"error_code":"enforced_spend_limit_reached"}}}"#,
    ])
    func aQuotaExhausted429IsNotRetried(_ body: String) throws {
        let server = ScriptedHTTPServer(script: [Response(status: 429, headers: ["Retry-After: 1"], body: body),
                                                 Response(body: StreamFixture.hello(.openAIChat))])
        defer { server.stop() }
        let run = ProviderRun.collect(try ProviderRun.provider(.openAIChat, server))
        #expect(run.error?.kind == .quotaExhausted)
        #expect(run.error?.message.hasSuffix("(the account's quota or spending limit is used up; not retried)") == true)
        #expect(server.requests.count == 1)
    }

    @Test(arguments: [400, 401, 403, 404, 413])
    func aClientErrorIsNotRetried(_ status: Int) throws {
        let server = ScriptedHTTPServer(script: [Response(status: status, headers: [], body: #"{"error":{"message":"no","type":"invalid_request_error"}}"#)])
        defer { server.stop() }
        let run = ProviderRun.collect(try ProviderRun.provider(.openAIResponses, server))
        #expect(run.error?.kind == .http(status: status))
        #expect(server.requests.count == 1)
    }

    @Test func anErrorEventBeforeAnyOutputIsRetried() throws {
        let overloaded = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
        let server = ScriptedHTTPServer(script: [Response(body: overloaded), Response(body: StreamFixture.hello(.anthropic))])
        defer { server.stop() }
        let run = ProviderRun.collect(try ProviderRun.provider(.anthropic, server))
        #expect(run.error == nil)
        #expect(server.requests.count == 2)
    }

    @Test func aFailureAfterAToolCallIsNeverRetried() throws {
        // The chat stream up to its finish_reason (both calls reported), then the connection drops.
        let body = StreamFixture.chat.body
        let cut = body[..<body.range(of: "data: {\"id\":\"c1\",\"choices\":[],")!.lowerBound].utf8.count
        let server = ScriptedHTTPServer(script: [Response(body: body, closeAfter: cut),
                                                 Response(body: StreamFixture.chat.body)])
        defer { server.stop() }
        let run = ProviderRun.collect(try ProviderRun.provider(.openAIChat, server))
        #expect(run.error?.kind == .transport)
        #expect(run.events.filter { if case .toolCall = $0 { true } else { false } }.count == 2)
        #expect(server.requests.count == 1, "a retry would hand the run engine the same tool calls again")
    }

    @Test func aConnectionRefusedIsRetriedThenReported() throws {
        let closed = LoopbackListener(refusing: true)
        defer { closed.close() }
        let provider = try ProviderConfig(name: "gone", kind: .openAICompatible, baseURL: "http://127.0.0.1:\(closed.port)/v1", model: "m")
            .makeProvider(apiKey: nil, options: ProviderOptions(retry: ProviderRun.fastRetry))
        let run = ProviderRun.collect(provider)
        #expect(run.error?.kind == .transport)
        #expect(run.error?.message.hasPrefix("provider 'gone' (http://127.0.0.1:\(closed.port)/v1/chat/completions): Failed to connect to 127.0.0.1 port \(closed.port)") == true)
        #expect(run.error?.message.hasSuffix("(after 6 attempts)") == true)
    }

    @Test func cancellationDuringARetryWaitReturnsAtOnce() throws {
        let server = ScriptedHTTPServer(script: [Response(status: 503, headers: ["Retry-After: 30"], body: "busy")])
        defer { server.stop() }
        let flag = CancelFlag()
        let provider = try ProviderRun.provider(.openAIChat, server, retry: .standard)
        Thread { _ = Wait.until { server.requests.count == 1 }; usleep(200_000); flag.set() }.start()
        let start = ContinuousClock.now
        let run = ProviderRun.collect(provider, isCancelled: { flag.isSet })
        #expect(run.error?.kind == .cancelled)
        #expect(ContinuousClock.now - start < .seconds(5), "the wait was 30 s")
        #expect(server.requests.count == 1)
    }

    @Test(arguments: ProviderConfig.Kind.allCases)
    func theAPIKeyGoesInOneHeaderAndNeverIntoAnError(_ kind: ProviderConfig.Kind) throws {
        let key = ProviderRun.apiKey
        let echo = #"{"error":{"message":"Incorrect API key provided: \#(key). You can find your API key at https://example.invalid","type":"invalid_request_error","code":"invalid_api_key"}}"#
        let server = ScriptedHTTPServer(script: [Response(status: 401, headers: [], body: echo)])
        defer { server.stop() }
        let run = ProviderRun.collect(try ProviderRun.provider(kind, server))
        #expect(run.error?.kind == .http(status: 401))
        #expect(run.error?.message.contains(key) == false)
        #expect(run.error?.message.contains("Incorrect API key provided: [API key].") == true)
        let request = try #require(server.requests.first)
        let carrying = request.headers.filter { $0.contains(key) }
        #expect(carrying == [kind == .anthropic ? "x-api-key: \(key)" : "Authorization: Bearer \(key)"])
        #expect(!request.body.contains(key))
    }

    @Test func aResponseOverTheCapIsTooLarge() throws {
        let line = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\(String(repeating: "x", count: 1000))\"}}]}\n\n"
        let server = ScriptedHTTPServer(script: [Response(body: String(repeating: line, count: 80))])
        defer { server.stop() }
        var options = ProviderOptions()
        options.maxResponseBytes = 64 << 10
        let run = ProviderRun.collect(try ProviderRun.provider(.openAIChat, server, options: options))
        #expect(run.error?.kind == .tooLarge)
        #expect(server.requests.count == 1)
    }
}
