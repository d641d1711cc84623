// fuzz-sources: Plugins/SSH/Sources/SSHPlugin/TerminalEventScanner.swift Plugins/SSH/Sources/SSHPlugin/SessionRing.swift
// What a remote shell prints into a persistent session: scanned for titles and bells, and kept
// in the ring buffer. The input is fed whole and in pieces (the first byte picks the piece
// size): the scanner finds the same events however the output is split, a title is bounded and
// shows no control, bidi override or zero-width character, and the ring holds exactly the last
// bytes up to its capacity.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    func scan(_ piece: Int) -> [TerminalEventScanner.Found] {
        var scanner = TerminalEventScanner()
        var found: [TerminalEventScanner.Found] = []
        var i = 0
        while i < bytes.count {
            let end = min(bytes.count, i + piece)
            bytes[i..<end].withUnsafeBytes { found += scanner.scan($0) }
            i = end
        }
        return found
    }
    let whole = scan(max(1, bytes.count))
    let split = scan(Int(bytes.first ?? 1) % 13 + 1)
    precondition(whole == split, "the same output gave other events when split")
    for case .title(let title) in whole {
        for scalar in title.unicodeScalars {
            let v = scalar.value
            precondition(v >= 0x20 && !(0x7F...0x9F).contains(v) && !(0x202A...0x202E).contains(v)
                         && !(0x2066...0x2069).contains(v) && !(0x200B...0x200F).contains(v), "a hidden character in a title")
        }
        // 256 bytes kept, each shown as at most 10 characters (\u{10ffff}).
        precondition(title.unicodeScalars.count <= TerminalEventScanner.maxTitleBytes * 10)
    }
    let capacity = Int(bytes.last ?? 0) % 64 + 1
    var ring = SessionRing(capacity: capacity)
    var i = 0
    let piece = Int(bytes.first ?? 1) % 7 + 1
    while i < bytes.count {
        let end = min(bytes.count, i + piece)
        bytes[i..<end].withUnsafeBytes { ring.append($0) }
        i = end
    }
    precondition(ring.contents == Array(bytes.suffix(capacity)), "the ring does not hold the last bytes")
    precondition(ring.count == min(capacity, bytes.count))
    return 0
}
