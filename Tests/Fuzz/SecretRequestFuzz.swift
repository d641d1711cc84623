// fuzz-sources: Plugins/Assistant/Sources/AssistantPlugin/SecretRequestArguments.swift
// request_secret's arguments, written by the model, on any bytes: nothing traps; what is
// accepted has every member within its bounds and names a tool that takes a handle; parsing
// is deterministic.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let first = SecretRequestArguments.parse(text)
    precondition(first == SecretRequestArguments.parse(text), "parsing is not deterministic")
    if case .success(let a) = first {
        precondition(SecretRequestArguments.hostBytes.contains(a.host.utf8.count))
        precondition(SecretRequestArguments.purposeCharacters.contains(a.purpose.count))
        precondition(SecretRequestArguments.consumers.contains(a.tool))
    }
    return 0
}
