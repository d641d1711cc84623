// fuzz-sources: Plugins/SFTP/Sources/SFTPPlugin/RemoteName.swift Plugins/SFTP/Sources/SFTPPlugin/SFTPWire.swift Plugins/SFTP/Sources/SFTPPlugin/Pacing.swift SDK/Swift/TermhostSDK/VisibleText.swift
// What an SFTP server sends, on any bytes: a listed name RemoteName accepts stays inside its
// directory; SFTP v3 strings and extension pairs parse without reading past the packet; a
// limits@openssh.com answer never sizes a write request past what it allows; the bandwidth
// limit's arithmetic never traps and never makes a later byte due earlier.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    // A listed name, as RemoteFS.list decodes it.
    let name = String(decoding: bytes, as: UTF8.self)
    if RemoteName.refusal(name) == nil {
        precondition(!name.isEmpty && name != "." && name != "..", "accepted a name that is no name: \(Array(name.utf8))")
        precondition(!name.utf8.contains(0x2f) && !name.utf8.contains(0), "accepted a path: \(Array(name.utf8))")
        precondition(VisibleText.isPlain(name), "accepted control characters: \(Array(name.utf8))")
        precondition(name.utf8.count <= RemoteName.maximumBytes)
        // Joined to a directory, it is one component more, and resolving ".." and "." in the
        // result never climbs out of the directory.
        let dir = "/target/dir"
        let joined = RemoteName.joined(dir, name)
        // Bytes, as the kernel sees the path ("/" then a combining mark is one Swift Character).
        precondition(joined.utf8.starts(with: (dir + "/").utf8) && joined.utf8.count == dir.utf8.count + 1 + name.utf8.count)
        var stack: [ArraySlice<UInt8>] = []
        for part in Array(joined.utf8).split(separator: 0x2f) {
            if part.elementsEqual("..".utf8) { _ = stack.popLast() } else if !part.elementsEqual(".".utf8) { stack.append(part) }
        }
        precondition(stack.count == 3 && stack[0].elementsEqual("target".utf8) && stack[1].elementsEqual("dir".utf8), "escaped: \(joined)")
    }

    // SSH_FXP_VERSION's extension pairs: any lengths, never a read past the end.
    let found = SFTPWire.extensions(ofVersion: bytes)
    precondition(found.count <= max(0, size - 5) / 8)
    var at = 0
    while bytes.string(at: &at) != nil { precondition(at <= size, "read past the packet: \(at) of \(size)") }

    // limits@openssh.com's answer: read only as the packet it claims to be, and the write
    // request made of it always fits the server's write and packet limits, in whole pages,
    // between libssh2's default and the patched function's ceiling.
    if let limits = SFTPWire.limits(ofReply: bytes, id: size >= 5 ? bytes.uint32(at: 1) : 0) {
        precondition(size >= 37 && bytes[0] == 201)
        if let request = SFTPWire.writeRequestSize(limits, standard: 30_000, ceiling: 256 * 1024) {
            precondition(request > 30_000 && request <= 256 * 1024 && request % 4096 == 0)
            precondition(UInt64(request) <= limits.write && UInt64(request) + 1024 <= limits.packet, "\(limits) -> \(request)")
        }
    }

    // The pacing of the first 24 bytes as three numbers: saturates, never traps, never goes back.
    if size >= 24 {
        func word(_ i: Int) -> UInt64 { bytes[i..<(i + 8)].reduce(0) { $0 << 8 | UInt64($1) } }
        let start = word(0), sent = word(8), rate = word(16)
        let due = Pacing.due(start: start, sent: sent, bytesPerSecond: rate)
        precondition(due >= start)
        if sent < .max { precondition(Pacing.due(start: start, sent: sent + 1, bytesPerSecond: rate) >= due) }
        _ = Pacing.wait(due: due, now: start)
    }
    return 0
}
