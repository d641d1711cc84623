// fuzz-sources: Plugins/SSH/Sources/SSHPlugin/KnownHostsParser.swift Plugins/SSH/Sources/SSHPlugin/Base64.swift SDK/Swift/TermhostSDK/VisibleText.swift
// The known_hosts parser on any bytes: nothing traps, every line is accounted for once, and what
// it returns holds its invariants.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let (entries, problems) = KnownHostsParser.parse(bytes)
    let lines = bytes.isEmpty ? 0 : bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).count
        - (bytes.last == UInt8(ascii: "\n") ? 1 : 0)
    // Each line is an entry, a problem or a comment, never two of them; in order.
    let numbers = (entries.map(\.line) + problems.map(\.line)).sorted()
    precondition(Set(numbers).count == numbers.count, "a line was reported twice")
    precondition(numbers.allSatisfy { $0 >= 1 && $0 <= lines }, "a line number out of range")
    for e in entries {
        // The key type on the line is the one inside the key blob.
        precondition(KnownHostsParser.keyTypeBytes(in: e.key).map { String(decoding: $0, as: UTF8.self) } == e.keyType)
        switch e.hosts {
        case .hashed(let salt, let hash): precondition(salt.count == 20 && hash.count == 20)
        case .patterns(let p):
            precondition(!p.isEmpty && !p.contains(UInt8(ascii: " ")) && !p.contains(UInt8(ascii: "\t")) && !p.contains(UInt8(ascii: "\n")))
            precondition(!p.contains { $0 >= 0x41 && $0 <= 0x5a }, "patterns are lower-cased")
            // Matching never traps; a pattern list without negation or wildcards matches its own names.
            if !p.contains(UInt8(ascii: "!")) && !p.contains(UInt8(ascii: "*")) && !p.contains(UInt8(ascii: "?")) {
                for name in p.split(separator: UInt8(ascii: ",")) {
                    precondition(KnownHostsParser.matches(patterns: p, name: Array(name)), "a plain name does not match itself")
                }
            }
            _ = KnownHostsParser.matches(patterns: p, name: Array(bytes.prefix(64)))
        }
    }
    // Messages quote the file's bytes only with control characters made visible.
    for p in problems { precondition(VisibleText.isPlain(p.reason), "a control character in a warning") }
    // Base64 round trip.
    if let decoded = Base64.decode(bytes: bytes[...]) {
        precondition(Base64.decode(bytes: Array(Base64.encode(decoded).utf8)[...]) == decoded)
    }
    return 0
}
