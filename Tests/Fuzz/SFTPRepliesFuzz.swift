// fuzz-sources: Plugins/SFTP/Sources/SFTPPlugin/SFTPFrames.swift Plugins/SFTP/Sources/SFTPPlugin/SFTPWire.swift
// What a server sends on a pipelined SFTP channel (SFTPPipe), on any bytes: cut into packets
// in any split of the stream, no packet is empty or past the limit, none reads past what came,
// the bytes come out in order; each packet parses without reading past its end, a handle is
// never longer than the protocol allows, and data never longer than the packet.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // The first byte picks how the stream is split into reads (as the channel gives them).
    let step = max(1, Int(bytes.first ?? 1))
    var frames = SFTPFrames()
    var taken = 0
    var at = 0
    while at < size {
        let end = min(size, at + step)
        bytes[at..<end].withUnsafeBytes { frames.append($0) }
        at = end
        do {
            while let body = try frames.next() {
                precondition(!body.isEmpty && body.count <= SFTPFrames.maximum, "a packet of \(body.count) bytes")
                // Each packet is the bytes that followed its length, in order.
                precondition(taken + 4 + body.count <= size, "read past what came")
                precondition(Array(bytes[(taken + 4)..<(taken + 4 + body.count)]) == body, "bytes out of order")
                taken += 4 + body.count
                check(body)
            }
        } catch {
            // A length of 0 or past the limit: the stream is given up.
            return 0
        }
    }
    check(bytes)
    return 0
}

private func check(_ body: [UInt8]) {
    switch SFTPReply.parse(body) {
    case .handle(_, let handle)?:
        precondition(handle.count <= 256 && handle.count <= body.count - 9)
    case .data(_, let data)?:
        precondition(data.count <= body.count - 9)
    case .status?, .attributes?, .other?:
        precondition(body.count >= 5)
    case nil:
        break
    }
}
