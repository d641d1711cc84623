/// OpenSSH `known_hosts`, parsed by us: libssh2 1.10's reader stops at the first line it does
/// not understand (`@cert-authority`, `@revoked`), which would silently drop every key after it.
///
/// Supported: plain host patterns (with `*`, `?` and `!` negation), `[host]:port`, hashed
/// `|1|salt|hash` entries, and the `@revoked` marker (a revoked key is refused for every host).
/// `@cert-authority` lines are read and kept, but host certificates are not verified
/// (libssh2 1.10 cannot present them), so they never make a plain key trusted.
/// A malformed line is skipped with a warning naming the file and line.
struct KnownHosts {
    struct Entry: Equatable {
        enum Marker: Equatable { case none, certAuthority, revoked }
        let marker: Marker
        let patterns: String
        let keyType: String
        let key: [UInt8]
        let file: String
        let line: Int
    }

    private(set) var entries: [Entry] = []
    private(set) var warnings: [String] = []

    init() {}

    /// Reads files in order; a missing file is fine (nothing known yet).
    init(files: [String]) {
        for file in files {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            parse(text, file: file)
        }
    }

    mutating func parse(_ text: String, file: String) {
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            var fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            var marker = Entry.Marker.none
            if let first = fields.first, first.hasPrefix("@") {
                switch first {
                case "@revoked": marker = .revoked
                case "@cert-authority": marker = .certAuthority
                default:
                    warnings.append("\(file):\(index + 1): unknown marker \(first); line skipped")
                    continue
                }
                fields.removeFirst()
            }
            guard fields.count >= 3, let key = Base64.decode(Substring(fields[2])), !key.isEmpty else {
                warnings.append("\(file):\(index + 1): malformed known_hosts line; skipped")
                continue
            }
            guard KnownHosts.keyTypeName(in: key) == fields[1] else {
                warnings.append("\(file):\(index + 1): key type \(fields[1]) does not match the key data; line skipped")
                continue
            }
            entries.append(Entry(marker: marker, patterns: fields[0], keyType: fields[1], key: key, file: file, line: index + 1))
        }
    }

    /// The name encoded at the start of an SSH public key blob ("ssh-ed25519").
    static func keyTypeName(in blob: [UInt8]) -> String? {
        guard blob.count >= 4 else { return nil }
        let n = Int(blob[0]) << 24 | Int(blob[1]) << 16 | Int(blob[2]) << 8 | Int(blob[3])
        guard n > 0, n < 64, blob.count >= 4 + n else { return nil }
        return String(decoding: blob[4..<(4 + n)], as: UTF8.self)
    }

    /// The name a host is looked up by: "host" on port 22, "[host]:port" otherwise.
    static func lookupName(host: String, port: Int) -> String { port == 22 ? host : "[\(host)]:\(port)" }

    enum Verdict: Equatable {
        /// The key matches an entry (file:line).
        case known(file: String, line: Int)
        /// No entry for this host and key type; `otherTypes` lists key types known for the host.
        case unknown(otherTypes: [String])
        /// An entry for this host has the same key type but another key (file:line to fix).
        case changed(file: String, line: Int)
        /// The key is marked @revoked (file:line).
        case revoked(file: String, line: Int)
    }

    func check(host: String, port: Int, keyType: String, key: [UInt8]) -> Verdict {
        if let r = entries.first(where: { $0.marker == .revoked && $0.key == key }) { return .revoked(file: r.file, line: r.line) }
        let names = [KnownHosts.lookupName(host: host, port: port)]
        let forHost = entries.filter { $0.marker == .none && KnownHosts.matches($0.patterns, names) }
        if let k = forHost.first(where: { $0.key == key }) { return .known(file: k.file, line: k.line) }
        if let c = forHost.first(where: { $0.keyType == keyType }) { return .changed(file: c.file, line: c.line) }
        return .unknown(otherTypes: Array(Set(forHost.map(\.keyType))).sorted())
    }

    /// A comma-separated pattern list matches when some positive pattern matches and no
    /// negated one does; hashed entries compare HMAC-SHA1(salt, name).
    static func matches(_ patterns: String, _ names: [String]) -> Bool {
        if patterns.hasPrefix("|1|") {
            let parts = patterns.split(separator: "|", omittingEmptySubsequences: false)
            guard parts.count == 4, let salt = Base64.decode(parts[2]), let hash = Base64.decode(parts[3]) else { return false }
            return names.contains { Digest.hmacSHA1(key: salt, data: Array($0.utf8)) == hash }
        }
        var positive = false
        for pattern in patterns.split(separator: ",") {
            let negated = pattern.hasPrefix("!")
            let glob = negated ? pattern.dropFirst() : pattern
            if names.contains(where: { KnownHosts.glob(Array(glob.lowercased().utf8), Array($0.lowercased().utf8)) }) {
                if negated { return false }
                positive = true
            }
        }
        return positive
    }

    static func glob(_ p: [UInt8], _ s: [UInt8]) -> Bool {
        var pi = 0, si = 0, star = -1, mark = 0
        while si < s.count {
            if pi < p.count && (p[pi] == UInt8(ascii: "?") || p[pi] == s[si]) { pi += 1; si += 1 }
            else if pi < p.count && p[pi] == UInt8(ascii: "*") { star = pi; mark = si; pi += 1 }
            else if star >= 0 { pi = star + 1; mark += 1; si = mark }
            else { return false }
        }
        while pi < p.count && p[pi] == UInt8(ascii: "*") { pi += 1 }
        return pi == p.count
    }

    /// A hashed line for a newly trusted key, as `ssh-keygen -H` writes them.
    static func hashedLine(host: String, port: Int, keyType: String, key: [UInt8]) -> String {
        let salt = Digest.random(20)
        let hash = Digest.hmacSHA1(key: salt, data: Array(lookupName(host: host, port: port).utf8))
        return "|1|\(Base64.encode(salt))|\(Base64.encode(hash)) \(keyType) \(Base64.encode(key))"
    }

    /// OpenSSH's fingerprint format: "SHA256:" and unpadded base64 of the key blob's SHA-256.
    static func fingerprint(_ key: [UInt8]) -> String { "SHA256:" + Base64.encode(Digest.sha256(key), padding: false) }
}

import Foundation
