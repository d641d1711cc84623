// fuzz-sources: Plugins/Forwarding/Sources/ForwardingPlugin/Socks5Parser.swift Plugins/Forwarding/Sources/ForwardingPlugin/Socks4Parser.swift SDK/Swift/TermhostSDK/VisibleText.swift
// The SOCKS5 greeting and request parser, and the SOCKS4/4a request parser, on any bytes:
// nothing traps, what they consume was there, a CONNECT names a real port and a non-empty name
// without NUL, and the name shown in a log line is plain.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    check4(bytes)
    var rest = bytes[...]
    if case .complete(let consumed, _) = Socks5Parser.greeting(rest) {
        precondition(consumed >= 2 && consumed <= rest.count && consumed <= Socks5Parser.maxMessage)
        rest = rest.dropFirst(consumed)
    }
    switch Socks5Parser.request(rest) {
    case .connect(let address, let port, let consumed):
        precondition(consumed <= rest.count && consumed <= Socks5Parser.maxMessage)
        precondition((1...65535).contains(port))
        switch address {
        case .ipv4(let a): precondition(a.count == 4)
        case .ipv6(let a): precondition(a.count == 16)
        case .domain(let name):
            precondition(!name.isEmpty && name.count <= 255 && !name.contains(0))
            precondition(VisibleText.isPlain(VisibleText.of(bytes: name)))
        }
        // A complete request parses the same with more bytes after it (the stream's start).
        precondition(Socks5Parser.request(rest + [1, 2, 3]) == .connect(address, port: port, consumed: consumed))
    case .refused(_, _, let consumed): precondition(consumed <= rest.count)
    case .incomplete: precondition(rest.count < Socks5Parser.maxMessage)
    case .invalid: break
    }
    return 0
}

/// SOCKS4 and 4a: the same promises, within Socks4Parser.maxMessage.
func check4(_ bytes: [UInt8]) {
    switch Socks4Parser.request(bytes[...]) {
    case .connect(let address, let port, let consumed):
        precondition(consumed <= bytes.count && consumed <= Socks4Parser.maxMessage && consumed >= 9)
        precondition((1...65535).contains(port))
        switch address {
        case .ipv4(let a): precondition(a.count == 4 && !(a[0] == 0 && a[1] == 0 && a[2] == 0 && a[3] != 0))
        case .ipv6: preconditionFailure("SOCKS4 has no IPv6")
        case .domain(let name):
            precondition(!name.isEmpty && name.count <= 255 && !name.contains(0))
            precondition(VisibleText.isPlain(VisibleText.of(bytes: name)))
        }
        precondition(Socks4Parser.request(bytes[...] + [7, 8]) == .connect(address, port: port, consumed: consumed))
    case .refused(_, _, let consumed): precondition(consumed <= bytes.count)
    case .incomplete: precondition(bytes.count < Socks4Parser.maxMessage)
    case .invalid: break
    }
}
