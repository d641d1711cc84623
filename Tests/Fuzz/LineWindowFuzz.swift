// fuzz-sources: Plugins/SFTP/Sources/SFTPPlugin/LineWindow.swift
// A remote file's bytes, as sftp_read feeds them to LineWindow in chunks: the window never
// traps, text with no NUL and valid UTF-8 gives exactly the lines of a plain split (whatever
// the chunk boundaries), anything else is refused as binary, and the bounds hold.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 3 else { return 0 }
    let offset = Int(data[0] % 8), maxLines = Int(data[1] % 8) + 1, cut = Int(data[2]) + 1
    let bytes = Array(UnsafeBufferPointer(start: data + 3, count: size - 3))
    var window = LineWindow(offset: offset, maxLines: maxLines, maxBytes: 64)
    var refused = false
    do throws(LineWindow.Binary) {
        var start = 0
        while start < bytes.count && !window.isFull {
            let end = min(bytes.count, start + cut)
            try window.feed(Array(bytes[start..<end]))
            start = end
        }
        try window.finish()
    } catch {
        refused = true
        precondition(error.at <= UInt64(bytes.count), "binary at \(error.at) past \(bytes.count) bytes")
    }
    let text = String(validating: bytes, as: UTF8.self)
    let isText = text != nil && !bytes.contains(0)
    precondition(window.lines.count <= maxLines)
    precondition(window.lines.allSatisfy { $0.utf8.count <= 64 && !$0.utf8.contains(0x0A) })
    if refused {
        // Only the bytes read before the window filled are judged.
        precondition(!isText, "refused text: \(bytes)")
        return 0
    }
    guard isText else { return 0 }
    // Split the bytes, not the String: Swift reads "\r\n" as one Character, which is not "\n",
    // while a line of a remote file ends at every LF byte.
    var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    if bytes.isEmpty || bytes.last == 0x0A { lines.removeLast() }
    let expected = Array(lines.dropFirst(offset).prefix(maxLines))
    if window.cutLine {
        // Bytes, not Characters: a cut may fall between a letter and its combining mark, and
        // String.hasPrefix compares grapheme clusters ("n" is no prefix of "n\u{05BF}").
        precondition(window.lines.count == 1 && expected.first.map { Array($0.utf8).starts(with: Array(window.lines[0].utf8)) } == true)
    } else {
        let bytesOf = { (l: [String]) in l.map { Array($0.utf8) } }   // String == is canonical equivalence, not bytes
        precondition(bytesOf(expected).starts(with: bytesOf(window.lines)), "window \(window.lines) is not a prefix of \(expected)")
        if window.nextOffset == nil { precondition(bytesOf(window.lines) == bytesOf(expected) && window.linesSeen == lines.count) }
    }
    if let next = window.nextOffset { precondition(next == offset + window.lines.count && next <= lines.count) }
    return 0
}
