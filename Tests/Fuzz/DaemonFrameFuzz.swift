// fuzz-sources: Host/Sources/Daemon/DaemonFrame.swift Host/Sources/Daemon/DaemonMessages.swift Host/Sources/Daemon/ClientEnvironment.swift SDK/Swift/TermhostSDK/EnvironmentName.swift SDK/Swift/TermhostSDK/VisibleText.swift
// What any local client of the daemon can send: a byte stream cut into frames (fed whole and in
// pieces of every size from the input's first byte), and each frame's payload read as a hello
// and as a request (with the session operations' fields and run's environment). The decoder never traps or holds a frame over its limit; the same stream
// gives the same frames however it is split; a frame decoded and encoded again is the same bytes.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let limit = 4096
    func frames(_ piece: Int) -> ([DaemonFrame], DaemonFrameDecoder.Next) {
        var decoder = DaemonFrameDecoder(maxPayload: limit)
        var out: [DaemonFrame] = []
        var i = 0
        var last = DaemonFrameDecoder.Next.needMore
        while i < bytes.count {
            let end = min(bytes.count, i + piece)
            decoder.feed(bytes[i..<end])
            i = end
            while true {
                last = decoder.next()
                guard case .frame(let f) = last else { break }
                precondition(f.payload.count <= limit && f.type != 0)
                precondition(f.encoded().count == DaemonFrame.headerSize + f.payload.count)
                out.append(f)
            }
            if case .malformed = last { break }
        }
        return (out, last)
    }
    let whole = frames(max(1, bytes.count))
    let split = frames(Int(bytes.first ?? 1) % 17 + 1)
    precondition(whole.0 == split.0, "the same stream gave other frames when split")
    if case .malformed = whole.1 { if case .malformed = split.1 {} else { preconditionFailure("malformed only when whole") } }
    precondition(whole.0.flatMap { $0.encoded() } == Array(bytes.prefix(whole.0.reduce(0) { $0 + $1.encoded().count })),
                 "frames encoded again are not the bytes they came from")
    for frame in whole.0 {
        if case .success(let hello) = DaemonProtocol.hello(frame.payload) {
            precondition((1...65_535).contains(hello.version) && !hello.client.isEmpty && hello.client.utf8.count <= DaemonProtocol.maxClientName)
        }
        if case .success(let op) = DaemonProtocol.operation(frame.payload) { precondition(!op.isEmpty && op.utf8.count <= 64) }
        // The fields the session operations read: what passes is inside its range.
        if case .success(let request) = DaemonProtocol.request(frame.payload) {
            if case .success(let id) = DaemonProtocol.sessionID(request.fields) {
                precondition((1...64).contains(id.utf8.count) && !id.contains("/") && !id.contains("."))
            }
            if case .success(let n) = DaemonProtocol.integer(request.fields, "columns", 1...10_000) { precondition((1...10_000).contains(n)) }
            if case .success(let t) = DaemonProtocol.time(request.fields, "since") { precondition(t.isFinite && t >= 0) }
            if case .success(let environment?) = ClientEnvironment.incoming(request.fields) {
                precondition(environment.count <= ClientEnvironment.maximumVariables)
                precondition(environment.allSatisfy { EnvironmentName.isValid($0.key) && !$0.value.utf8.contains(0) })
                precondition(environment.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 2 } <= ClientEnvironment.maximumBytes)
            }
        }
    }
    return 0
}
