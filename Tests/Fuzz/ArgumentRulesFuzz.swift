// fuzz-sources: Host/Sources/Runtime/ArgumentRules.swift
// The checks on values plugins pass to host services, on any bytes: an accepted topic is
// exactly the documented alphabet and length, the first invalid UTF-8 byte is really where the
// encoding breaks, and nothing traps.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let valid = String(validating: bytes, as: UTF8.self)
    if let bad = ArgumentRules.firstInvalidUTF8(bytes) {
        precondition(valid == nil, "valid UTF-8 reported invalid at \(bad)")
        precondition(bad >= 0 && bad < size)
        precondition(String(validating: bytes[..<bad], as: UTF8.self) != nil, "the bytes before \(bad) must be valid")
    } else {
        precondition(valid != nil, "invalid UTF-8 accepted")
    }
    let text = String(decoding: bytes, as: UTF8.self)
    if ArgumentRules.topicProblem(text) == nil {
        precondition(!text.isEmpty && text.utf8.count <= ArgumentRules.maxTopicBytes)
        precondition(text.utf8.allSatisfy { b in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b)
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
        }, "a topic outside [a-z0-9._-] was accepted: \(Array(text.utf8))")
    }
    if size <= 4096 { _ = ArgumentRules.isJSON(text) }
    return 0
}
