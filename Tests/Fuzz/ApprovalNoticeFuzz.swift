// fuzz-sources: Plugins/SSH/Sources/SSHPlugin/ApprovalNotice.swift SDK/Swift/TermhostSDK/VisibleText.swift SDK/Swift/TermhostSDK/JSONText.swift
import Foundation

// Another plugin's approval events, on any bytes (the first byte picks the topic): a notice
// is taken whole or dropped, never traps; a taken one has a positive id, bounded fields, a
// known decision, and an event body that is one JSON object once closed.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let topic = data[0] % 2 == 0 ? ApprovalNotice.pendingTopic : ApprovalNotice.decidedTopic
    let json = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
    guard let notice = ApprovalNotice.parse(topic: topic, json) else { return 0 }
    precondition(notice.id > 0)
    precondition((notice.host?.utf8.count ?? 0) <= ApprovalNotice.maxField)
    if case .decided(let d) = notice.kind { precondition(ApprovalNotice.decisions.contains(d)) }
    let closed = notice.eventBody.dropFirst() + "}"
    let object = try? JSONSerialization.jsonObject(with: Data(("{\"at\":1," + closed).utf8)) as? [String: Any]
    precondition(object != nil, "the event body is not one JSON object")
    return 0
}
