// fuzz-sources: SDK/Swift/TermhostSDK/VisibleText.swift SDK/Swift/TermhostSDK/BoundedNumber.swift
// VisibleText and BoundedNumber on any bytes: nothing unsafe survives, nothing traps.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let shown = VisibleText.of(bytes: bytes)
    precondition(VisibleText.isPlain(shown), "a control character survived: \(Array(shown.utf8))")
    let text = String(decoding: bytes, as: UTF8.self)
    precondition(VisibleText.isPlain(VisibleText.of(text)))
    if let n = try? BoundedNumber.integer(text, name: "n", in: -5...5) { precondition((-5...5).contains(n)) }
    if let d = try? BoundedNumber.decimal(text, name: "d", in: 0.1...600) { precondition(d.isFinite && d >= 0.1 && d <= 600) }
    return 0
}
