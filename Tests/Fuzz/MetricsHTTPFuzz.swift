// fuzz-sources: Plugins/Metrics/Sources/MetricsCore/HTTPRequestHead.swift
// The `metrics serve` request parser on any bytes: nothing traps; a request has a target of
// visible ASCII only; an input past the head limit is never left waiting; a status is one of
// those the endpoint documents; a parse never changes when bytes come after the head.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let outcome = HTTPRequestHead.parse(bytes)
    switch outcome {
    case .incomplete:
        precondition(bytes.count <= HTTPRequestHead.maxHeadBytes, "waiting past the head limit")
    case .request(_, let target):
        precondition(!target.isEmpty && target.utf8.allSatisfy { $0 > 32 && $0 < 127 })
        precondition(HTTPRequestHead.parse(bytes + Array("GET / HTTP/1.1\r\n\r\n".utf8)) == outcome)
    case .refused(let status, _, let body):
        precondition([400, 405, 431].contains(status) && body.hasSuffix("\n"))
    }
    return 0
}
