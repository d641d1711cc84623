// fuzz-sources: Plugins/Assistant/Sources/AssistantProviders/SSEParser.swift
// The SSE parser on any bytes: nothing traps, and the events do not depend on where the stream
// is cut (the first byte chooses the cut), nor on bytewise feeding.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var whole = SSEParser(maxEventBytes: 4096)
    let expected = try? whole.feed(bytes)

    var split = SSEParser(maxEventBytes: 4096)
    let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    var events: [SSEEvent]? = []
    do {
        events! += try split.feed(bytes[..<cut])
        events! += try split.feed(bytes[cut...])
    } catch { events = nil }
    precondition(events == expected, "a cut at \(cut) changed the events")

    var bytewise = SSEParser(maxEventBytes: 4096)
    var single: [SSEEvent]? = []
    do { for byte in bytes { single! += try bytewise.feed(CollectionOfOne(byte)) } } catch { single = nil }
    precondition(single == expected, "bytewise feeding changed the events")
    if let expected { precondition(expected.allSatisfy { $0.data.utf8.count <= 4096 }) }
    return 0
}
