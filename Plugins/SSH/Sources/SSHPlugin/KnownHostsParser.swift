#if canImport(TermhostSDK)
import TermhostSDK   // VisibleText; the fuzz target compiles VisibleText.swift in instead
#endif

/// The known_hosts format, read as bytes: one pass over the file, one entry a usable line, and a
/// problem (line number and reason) for each line that cannot be used.
///
/// Why bytes: a known_hosts file is not text in any one encoding. A Latin-1 comment, a stray
/// byte from an editor or a host name in another encoding is one line OpenSSH skips; decoding
/// the whole file as UTF-8 used to lose every line of it, `@revoked` ones included.
///
/// The rules follow OpenSSH's reading of the file (its man page sshd(8), "SSH_KNOWN_HOSTS FILE
/// FORMAT"): lines end at `\n`, a `\r` before it is dropped (CRLF files); leading spaces and
/// tabs are skipped; blank lines and lines starting with `#` are comments, whatever bytes they
/// hold; an optional marker (`@revoked`, `@cert-authority`) comes first, then the host field
/// (a comma-separated pattern list with `*`, `?` and `!` negation, `[host]:port` names, or one
/// hashed `|1|salt|hash` name), the key type, the base64 key, and an optional comment. Fields
/// are separated by spaces or tabs.
///
/// This file uses nothing but the standard library (with Base64.swift and VisibleText.swift), so the fuzz target
/// Tests/Fuzz/KnownHostsFuzz.swift compiles it as it is; the HMAC for hashed names is supplied
/// by the caller.
struct KnownHostsEntry: Equatable {
    enum Marker: Equatable { case none, certAuthority, revoked }
    enum Hosts: Equatable {
        /// A pattern list, ASCII letters lower-cased (host names compare without case).
        case patterns([UInt8])
        /// `|1|salt|hash`: HMAC-SHA1 keyed with salt of the lookup name (both 20 bytes).
        case hashed(salt: [UInt8], hash: [UInt8])
    }
    let marker: Marker
    let hosts: Hosts
    /// The key type, from the line and checked against the name inside the key blob.
    let keyType: String
    let key: [UInt8]
    /// 1-based line number.
    let line: Int
}

struct KnownHostsProblem: Equatable {
    let line: Int
    let reason: String
}

enum KnownHostsParser {
    static let hashMagic: [UInt8] = Array("|1|".utf8)

    static func parse(_ bytes: [UInt8]) -> (entries: [KnownHostsEntry], problems: [KnownHostsProblem]) {
        var entries: [KnownHostsEntry] = []
        var problems: [KnownHostsProblem] = []
        var start = 0, number = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != UInt8(ascii: "\n") { end += 1 }
            number += 1
            switch parseLine(bytes[start..<end], line: number) {
            case .entry(let e): entries.append(e)
            case .problem(let p): problems.append(p)
            case .comment: break
            }
            start = end + 1
        }
        return (entries, problems)
    }

    enum LineResult { case entry(KnownHostsEntry), problem(KnownHostsProblem), comment }

    static func isBlank(_ b: UInt8) -> Bool { b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") || b == UInt8(ascii: "\r") }

    /// Splits off the next field (bytes up to a space or tab), skipping the blanks before it.
    static func nextField(_ s: inout ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        while let b = s.first, isBlank(b) { s = s.dropFirst() }
        guard !s.isEmpty else { return nil }
        var i = s.startIndex
        while i < s.endIndex && !isBlank(s[i]) { i += 1 }
        let field = s[s.startIndex..<i]
        s = s[i...]
        return field
    }

    static func parseLine(_ raw: ArraySlice<UInt8>, line: Int) -> LineResult {
        var rest = raw
        guard var first = nextField(&rest) else { return .comment }
        if first.first == UInt8(ascii: "#") { return .comment }
        var marker = KnownHostsEntry.Marker.none
        if first.first == UInt8(ascii: "@") {
            if first.elementsEqual("@revoked".utf8) { marker = .revoked }
            else if first.elementsEqual("@cert-authority".utf8) { marker = .certAuthority }
            else { return .problem(KnownHostsProblem(line: line, reason: "unknown marker \(visible(first)); line skipped")) }
            guard let hosts = nextField(&rest) else { return malformed(line) }
            first = hosts
        }
        guard let typeField = nextField(&rest), let keyField = nextField(&rest) else { return malformed(line) }
        // An old SSH-1 RSA line ("host bits exponent modulus") has digits here: not usable.
        guard let key = Base64.decode(bytes: keyField), !key.isEmpty else { return malformed(line) }
        guard let blobType = keyTypeBytes(in: key), blobType.elementsEqual(typeField) else {
            return .problem(KnownHostsProblem(line: line, reason: "key type \(visible(typeField)) does not match the key data; line skipped"))
        }
        let hosts: KnownHostsEntry.Hosts
        if first.starts(with: hashMagic) {
            let body = first.dropFirst(hashMagic.count)
            let parts = body.split(separator: UInt8(ascii: "|"), omittingEmptySubsequences: false)
            guard parts.count == 2, let salt = Base64.decode(bytes: parts[0]), let hash = Base64.decode(bytes: parts[1]),
                  salt.count == 20, hash.count == 20 else {
                return .problem(KnownHostsProblem(line: line, reason: "malformed hashed host name; line skipped"))
            }
            hosts = .hashed(salt: salt, hash: hash)
        } else {
            hosts = .patterns(first.map(lowercased))
        }
        return .entry(KnownHostsEntry(marker: marker, hosts: hosts, keyType: String(decoding: typeField, as: UTF8.self),
                                      key: key, line: line))
    }

    static func malformed(_ line: Int) -> LineResult {
        .problem(KnownHostsProblem(line: line, reason: "malformed known_hosts line; skipped"))
    }

    /// Bytes of a line in a message: control characters and invalid UTF-8 shown as octal.
    static func visible(_ bytes: ArraySlice<UInt8>) -> String { VisibleText.of(bytes: bytes) }

    /// The name at the start of an SSH public key blob (its first string), if well formed.
    static func keyTypeBytes(in blob: [UInt8]) -> ArraySlice<UInt8>? {
        guard blob.count >= 4 else { return nil }
        let n = Int(blob[0]) << 24 | Int(blob[1]) << 16 | Int(blob[2]) << 8 | Int(blob[3])
        guard n > 0, n < 64, blob.count >= 4 + n else { return nil }
        return blob[4..<(4 + n)]
    }

    static func lowercased(_ b: UInt8) -> UInt8 { b >= 0x41 && b <= 0x5a ? b + 0x20 : b }

    /// A pattern list matches `name` (already lower-cased) when some positive pattern matches it
    /// and no negated one does, as OpenSSH's match_pattern_list does.
    static func matches(patterns: [UInt8], name: [UInt8]) -> Bool {
        var positive = false
        for pattern in patterns.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true) {
            let negated = pattern.first == UInt8(ascii: "!")
            if glob(negated ? pattern.dropFirst() : pattern, name[...]) {
                if negated { return false }
                positive = true
            }
        }
        return positive
    }

    /// `*` matches any run of bytes, `?` any one byte; linear backtracking on the last star.
    static func glob(_ p: ArraySlice<UInt8>, _ s: ArraySlice<UInt8>) -> Bool {
        var pi = p.startIndex, si = s.startIndex, star = -1, mark = 0
        while si < s.endIndex {
            if pi < p.endIndex && (p[pi] == UInt8(ascii: "?") || p[pi] == s[si]) { pi += 1; si += 1 }
            else if pi < p.endIndex && p[pi] == UInt8(ascii: "*") { star = pi; mark = si; pi += 1 }
            else if star >= 0 { pi = star + 1; mark += 1; si = mark }
            else { return false }
        }
        while pi < p.endIndex && p[pi] == UInt8(ascii: "*") { pi += 1 }
        return pi == p.endIndex
    }
}
