// fuzz-sources: Plugins/Assistant/Sources/AssistantCore/JSONRPCLines.swift Plugins/Assistant/Sources/AssistantCore/JSONRPCMessage.swift
// `termhost mcp`'s input on any bytes: nothing traps; the lines do not depend on where the
// stream is cut (the first byte chooses the cut) nor on bytewise feeding; no line is longer
// than the bound; every line parses to a message or to an error, and an answer to it is one
// line of JSON.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let bound = 256
    var whole = JSONRPCLines(maxLineBytes: bound)
    var expected = whole.feed(bytes)
    if let last = whole.finish() { expected.append(last) }

    var split = JSONRPCLines(maxLineBytes: bound)
    let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    var items = split.feed(bytes[..<cut]) + split.feed(bytes[cut...])
    if let last = split.finish() { items.append(last) }
    precondition(items == expected, "a cut at \(cut) changed the lines")

    var bytewise = JSONRPCLines(maxLineBytes: bound)
    var single: [JSONRPCLines.Item] = []
    for byte in bytes { single += bytewise.feed(CollectionOfOne(byte)) }
    if let last = bytewise.finish() { single.append(last) }
    precondition(single == expected, "bytewise feeding changed the lines")

    for item in expected {
        guard case .line(let line) = item else { continue }
        precondition(line.count <= bound && !line.contains(0x0A))
        let answer: String
        switch JSONRPCMessage.parse(line) {
        case .failure(let error): answer = JSONRPCMessage.error(error.id, error)
        case .success(.request(let id, let method, _)): answer = JSONRPCMessage.result(id, ["method": method])
        case .success(.notification(let method, let params)): answer = JSONRPCMessage.notification(method, params)
        case .success(.response(let id, _, _)): answer = JSONRPCMessage.result(id, [:])
        }
        precondition(!answer.contains("\n") && (try? JSONSerialization.jsonObject(with: Data(answer.utf8))) != nil,
                     "an answer is not one line of JSON: \(answer)")
    }
    return 0
}
