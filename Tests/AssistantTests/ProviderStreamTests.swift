import AssistantCore
@testable import AssistantProviders
import Foundation
import Testing
import TestSupport

/// Each wire format decodes to the same events however the stream is cut.
@Suite struct ProviderStreamTests {
    /// Feeds `body` to the SSE parser and the format's decoder in two pieces split at `split`.
    static func decode(_ fixture: StreamFixture, body: [UInt8], split: Int) throws -> [ModelEvent] {
        var parser = SSEParser()
        var decoder = fixture.decoder()
        var events: [ModelEvent] = []
        for piece in [body[..<split], body[split...]] {
            for event in try parser.feed(piece) where !decoder.isFinished { events += try decoder.decode(event) }
        }
        #expect(decoder.isFinished)
        return events
    }

    @Test(arguments: StreamFixture.all)
    func everySplitPositionAndLineEndingGivesTheSameEvents(_ fixture: StreamFixture) throws {
        for ending in ["\n", "\r\n", "\r"] {
            let body = Array(fixture.body.replacingOccurrences(of: "\n", with: ending).utf8)
            for split in 0...body.count {
                let events = try Self.decode(fixture, body: body, split: split)
                #expect(events == fixture.events, "\(fixture.kind) split at \(split) with \(ending.debugDescription) line endings")
                if events != fixture.events { return }
            }
        }
    }

    @Test(arguments: StreamFixture.all)
    func oneByteWritesOverHTTPGiveTheSameEvents(_ fixture: StreamFixture) throws {
        let server = ScriptedHTTPServer(script: [.init(body: fixture.body, writes: .bytewise)])
        defer { server.stop() }
        let run = ProviderRun.collect(try ProviderRun.provider(fixture.kind, server))
        #expect(run.error == nil)
        if fixture.kind == .openAICompatible {
            // Over HTTP the missing call ID is made up per response; only its shape is fixed.
            guard case .toolCall(let call) = run.events.first else { Issue.record("no tool call: \(run.events)"); return }
            #expect(call.id.hasPrefix("call_") && call.name == "ssh_exec" && call.argumentsJSON == StreamFixture.df)
            #expect(run.events.dropFirst() == fixture.events.dropFirst())
        } else {
            #expect(run.events == fixture.events)
        }
    }

    @Test func aFirstByteHookSeesTheResponseBeforeItsEvents() throws {
        let server = ScriptedHTTPServer(script: [.init(body: StreamFixture.chat.body)])
        defer { server.stop() }
        let seen = CancelFlag()
        let options = ProviderOptions(onFirstByte: { _ in seen.set() })
        var hookBeforeFirstEvent = false
        _ = ProviderRun.collect(try ProviderRun.provider(.openAIChat, server, options: options), onEvent: { _ in
            if !hookBeforeFirstEvent { hookBeforeFirstEvent = seen.isSet }
        })
        #expect(hookBeforeFirstEvent)
    }

    @Test func aMidStreamErrorEventIsAProviderErrorWithItsType() throws {
        let body = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
            + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
        let server = ScriptedHTTPServer(script: [.init(body: body)])
        defer { server.stop() }
        let run = ProviderRun.collect(try ProviderRun.provider(.anthropic, server))
        #expect(run.events == [.textDelta("Hi")])
        #expect(run.error?.kind == .provider(type: "overloaded_error"))
        #expect(run.error?.message == "provider 'scripted' (\(server.baseURL)/messages): the stream reported overloaded_error: Overloaded (the response had begun; not retried)")
        #expect(server.requests.count == 1)
    }

    @Test func malformedJSONIsMalformedAndNotRetried() throws {
        let server = ScriptedHTTPServer(script: [.init(body: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}\n\ndata: [DONE]\n\n")])
        defer { server.stop() }
        let run = ProviderRun.collect(try ProviderRun.provider(.openAIChat, server))
        #expect(run.error?.kind == .malformed)
        #expect(run.error?.message.hasPrefix("provider 'scripted' (\(server.baseURL)/chat/completions): a Chat Completions chunk is not a JSON object") == true)
        #expect(server.requests.count == 1)
    }

    @Test func twoToolCallsWithOneIDAreMalformed() throws {
        let call = #"{"index":%d,"id":"call_1","type":"function","function":{"name":"ssh_exec","arguments":"{}"}}"#
        let body = [0, 1].map { "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[\(String(format: call, $0))]}}]}\n\n" }.joined()
            + "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"
        let server = ScriptedHTTPServer(script: [.init(body: body)])
        defer { server.stop() }
        let run = ProviderRun.collect(try ProviderRun.provider(.openAIChat, server))
        #expect(run.events == [])
        #expect(run.error?.kind == .malformed)
        #expect(run.error?.message.hasSuffix("the response has two tool calls with the ID 'call_1'") == true)
    }

    @Test func aStreamWithoutItsEndMarkerEndedEarly() throws {
        // Each format's stream cut just before its marker, by a clean end of the chunked body.
        for fixture in [StreamFixture.chat, .responses, .anthropic] {
            let marker = ["data: [DONE]", "event: response.completed", "event: message_stop"].first { fixture.body.contains($0) }!
            let cut = String(fixture.body[..<fixture.body.range(of: marker)!.lowerBound])
            let server = ScriptedHTTPServer(script: [.init(body: cut)])
            defer { server.stop() }
            let run = ProviderRun.collect(try ProviderRun.provider(fixture.kind, server))
            #expect(run.error?.kind == .transport)
            #expect(run.error?.message.hasSuffix("stream ended early: the connection closed before the response's end marker (the response had begun; not retried)") == true)
            #expect(server.requests.count == 1, "events were reported, so no retry")
        }
    }

    @Test func aConnectionClosedMidChunkIsATransportError() throws {
        let server = ScriptedHTTPServer(script: [.init(body: StreamFixture.anthropic.body, closeAfter: 700)])
        defer { server.stop() }
        let run = ProviderRun.collect(try ProviderRun.provider(.anthropic, server))
        #expect(run.error?.kind == .transport)
        #expect(run.events == [.textDelta("Checking é✓.")])
        #expect(server.requests.count == 1)
    }

    @Test func aStreamSilentForTheIdleTimeoutFails() throws {
        let server = ScriptedHTTPServer(script: [.init(body: StreamFixture.hello(.openAIChat), stallAfter: 10)])
        defer { server.stop() }
        let options = ProviderOptions(timeouts: HTTPTimeouts(connectSeconds: 5, idleSeconds: 1, totalSeconds: 60))
        let run = ProviderRun.collect(try ProviderRun.provider(.openAIChat, server, retry: .none, options: options))
        #expect(run.error?.kind == .transport)
        #expect(run.error?.message.hasSuffix("(timeouts: connect 5 s, idle 1 s, total 60 s)") == true, "\(String(describing: run.error))")
    }

    @Test func cancellationStopsAStalledStreamPromptly() throws {
        let server = ScriptedHTTPServer(script: [.init(body: StreamFixture.hello(.openAIChat), stallAfter: 10)])
        defer { server.stop() }
        let flag = CancelFlag()
        let provider = try ProviderRun.provider(.openAIChat, server)
        Thread { _ = Wait.until { server.requests.count == 1 }; usleep(100_000); flag.set() }.start()
        let start = ContinuousClock.now
        let run = ProviderRun.collect(provider, isCancelled: { flag.isSet })
        #expect(run.error?.kind == .cancelled)
        #expect(ContinuousClock.now - start < .seconds(5))
    }
}

extension StreamFixture: CustomTestStringConvertible {
    var testDescription: String { kind.rawValue }
}
