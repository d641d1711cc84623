// fuzz-sources: Plugins/Assistant/Sources/AssistantProviders/SSEParser.swift Plugins/Assistant/Sources/AssistantProviders/WireFormat.swift Plugins/Assistant/Sources/AssistantProviders/ChatCompletionsWire.swift Plugins/Assistant/Sources/AssistantProviders/ResponsesWire.swift Plugins/Assistant/Sources/AssistantProviders/AnthropicWire.swift Plugins/Assistant/Sources/AssistantCore/ModelConversation.swift SDK/Swift/TermhostSDK/JSONText.swift SDK/Swift/TermhostSDK/VisibleText.swift
// A provider's response stream from any bytes, through the SSE parser and each wire format's
// decoder (Chat Completions, Responses, Anthropic Messages): nothing traps, nothing follows
// `.finished`, and a tool call is reported at most once per ID.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let decoders: [any ResponseStreamDecoder] = [ChatCompletionsDecoder(idPrefix: "call_f_"), ResponsesDecoder(), AnthropicDecoder()]
    for var decoder in decoders {
        var parser = SSEParser(maxEventBytes: 8192)
        guard let events = try? parser.feed(bytes) else { continue }
        var reported: [ModelEvent] = []
        for event in events where !decoder.isFinished {
            guard let more = try? decoder.decode(event) else { break }
            reported += more
        }
        if let end = reported.firstIndex(where: { if case .finished = $0 { true } else { false } }) {
            precondition(end == reported.count - 1 && decoder.isFinished, "events after .finished")
        }
        var ids = Set<String>()
        for case .toolCall(let call) in reported { precondition(ids.insert(call.id).inserted, "tool call \(call.id) reported twice") }
    }
    return 0
}
