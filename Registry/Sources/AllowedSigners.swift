import Foundation

/// An allowed signers file, in the format of ssh-keygen(1) "ALLOWED SIGNERS": one signer per
/// line,
///
///     principals [options] keytype base64-key [comment]
///
/// where principals is a comma-separated list of patterns (quoted when it holds spaces) and
/// options are `cert-authority`, `namespaces="pattern,..."`, `valid-after="time"` and
/// `valid-before="time"` (time: YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, local time unless it
/// ends in Z). Blank lines and lines starting with '#' are skipped. A malformed line makes the
/// whole file unusable, naming the line, as ssh-keygen -Y verify does: a file that cannot be
/// read as its author meant must not decide what is trusted.
public struct AllowedSigners: Sendable, Equatable {
    public struct Signer: Sendable, Equatable {
        /// The principals field as written, e.g. "release@example.com,*@ops.example.com".
        public var principals: String
        public var key: SSHPublicKey
        /// The key is a certificate authority; plain-key signatures never match such a line.
        public var certificateAuthority: Bool
        /// Patterns of the namespaces this key may sign for; nil: any.
        public var namespaces: [String]?
        public var validAfter: Date?
        public var validBefore: Date?
        public var line: Int
    }

    public var signers: [Signer]

    public static let maxBytes = 1 << 20

    public init(signers: [Signer]) { self.signers = signers }

    public init(text: String) throws(SSHFormatError) {
        guard text.utf8.count <= Self.maxBytes else { throw SSHFormatError("larger than 1 MiB") }
        var signers: [Signer] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            if line.isEmpty || line.hasPrefix("#") { continue }
            do { signers.append(try Self.signer(Substring(line), line: index + 1)) } catch {
                throw SSHFormatError("line \(index + 1): \(error.detail)")
            }
        }
        self.signers = signers
    }

    static func signer(_ text: Substring, line: Int) throws(SSHFormatError) -> Signer {
        var rest = text
        let principals: Substring
        if rest.hasPrefix("\"") {
            rest = rest.dropFirst()
            guard let close = rest.firstIndex(of: "\"") else { throw SSHFormatError("unterminated quoted principals") }
            principals = rest[..<close]
            rest = rest[rest.index(after: close)...]
        } else {
            principals = rest.prefix { $0 != " " && $0 != "\t" }
            rest = rest.dropFirst(principals.count)
        }
        guard !principals.isEmpty else { throw SSHFormatError("no principals") }
        rest = rest.drop { $0 == " " || $0 == "\t" }
        var options = Options()
        let key: SSHPublicKey
        if let plain = try? SSHPublicKey(line: rest) {
            key = plain
        } else {
            // Not a key: options come first (OpenSSH tries the key first too).
            options = try parseOptions(&rest)
            rest = rest.drop { $0 == " " || $0 == "\t" }
            do { key = try SSHPublicKey(line: rest) } catch { throw SSHFormatError("key: \(error.detail)") }
        }
        return Signer(principals: String(principals), key: key, certificateAuthority: options.certificateAuthority,
                      namespaces: options.namespaces, validAfter: options.validAfter, validBefore: options.validBefore, line: line)
    }

    struct Options {
        var certificateAuthority = false
        var namespaces: [String]?
        var validAfter: Date?
        var validBefore: Date?
    }

    static func parseOptions(_ rest: inout Substring) throws(SSHFormatError) -> Options {
        var signer = Options()
        var seen = Set<String>()
        repeat {
            if rest.first == "," { rest = rest.dropFirst() }
            let name = rest.prefix { $0.isLetter || $0 == "-" }
            rest = rest.dropFirst(name.count)
            let lower = name.lowercased()
            guard seen.insert(lower).inserted else { throw SSHFormatError("option '\(name)' given twice") }
            var value: String? = nil
            if rest.first == "=" {
                rest = rest.dropFirst()
                guard rest.first == "\"" else { throw SSHFormatError("option '\(name)': expected a quoted value") }
                rest = rest.dropFirst()
                var v = ""
                while let c = rest.first, c != "\"" {
                    if c == "\\", rest.dropFirst().first == "\"" { v.append("\""); rest = rest.dropFirst(2); continue }
                    v.append(c)
                    rest = rest.dropFirst()
                }
                guard rest.first == "\"" else { throw SSHFormatError("option '\(name)': unterminated quoted value") }
                rest = rest.dropFirst()
                value = v
            }
            switch (lower, value) {
            case ("cert-authority", nil):
                signer.certificateAuthority = true
            case ("namespaces", let v?):
                signer.namespaces = v.split(separator: ",").map(String.init)
            case ("valid-after", let v?):
                signer.validAfter = try time(v, option: "valid-after")
            case ("valid-before", let v?):
                signer.validBefore = try time(v, option: "valid-before")
            case ("", _):
                throw SSHFormatError("expected a key or options")
            default:
                throw SSHFormatError("unsupported option '\(name)'")
            }
        } while rest.first == ","
        guard rest.first == " " || rest.first == "\t" else { throw SSHFormatError("expected a key after the options") }
        return signer
    }

    /// ssh-keygen's absolute time: YYYYMMDD[HHMM[SS]], with a trailing Z for UTC.
    static func time(_ text: String, option: String) throws(SSHFormatError) -> Date {
        var digits = Substring(text)
        var zone = TimeZone.current
        if digits.hasSuffix("Z") || digits.hasSuffix("z") {
            digits = digits.dropLast()
            zone = TimeZone(identifier: "UTC")!
        }
        guard [8, 12, 14].contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw SSHFormatError("\(option)=\"\(text)\": expected YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, with Z for UTC")
        }
        func field(_ from: Int, _ length: Int) -> Int {
            let start = digits.index(digits.startIndex, offsetBy: from)
            return Int(digits[start..<digits.index(start, offsetBy: length)])!
        }
        var parts = DateComponents()
        parts.year = field(0, 4)
        parts.month = field(4, 2)
        parts.day = field(6, 2)
        parts.hour = digits.count >= 12 ? field(8, 2) : 0
        parts.minute = digits.count >= 12 ? field(10, 2) : 0
        parts.second = digits.count == 14 ? field(12, 2) : 0
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        guard (1...12).contains(parts.month!), (1...31).contains(parts.day!), parts.hour! < 24, parts.minute! < 60, parts.second! < 61,
              let date = calendar.date(from: parts), calendar.component(.day, from: date) == parts.day else {
            throw SSHFormatError("\(option)=\"\(text)\": not a valid date")
        }
        return date
    }

    /// The lines that name `key` as a plain signer (cert-authority lines excluded).
    public func lines(for key: SSHPublicKey) -> [Signer] {
        signers.filter { !$0.certificateAuthority && $0.key == key }
    }
}

extension AllowedSigners.Signer {
    /// Why this line does not let its key sign `namespace` at `date`, or nil when it does.
    public func refusal(namespace: String, at date: Date) -> String? {
        if let namespaces, !SSHPattern.matchesList(namespaces, namespace) {
            return "line \(line) allows namespaces \"\(namespaces.joined(separator: ","))\", not \"\(namespace)\""
        }
        if let validAfter, date < validAfter { return "line \(line) makes the key valid only after \(Self.format(validAfter))" }
        if let validBefore, date >= validBefore { return "line \(line) made the key valid only before \(Self.format(validBefore)) (expired)" }
        return nil
    }

    static func format(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return f.string(from: date)
    }
}

/// OpenSSH's pattern lists (match.c): comma-separated patterns with '*' and '?', a leading '!'
/// negating one; a list matches when some pattern matches and no negated one does.
public enum SSHPattern {
    public static func matchesList(_ patterns: [String], _ value: String) -> Bool {
        var matched = false
        for p in patterns {
            if p.hasPrefix("!") {
                if matches(Array(p.utf8.dropFirst()), Array(value.utf8)) { return false }
            } else if matches(Array(p.utf8), Array(value.utf8)) {
                matched = true
            }
        }
        return matched
    }

    /// Iterative glob with backtracking to the last '*': linear in practice, never exponential.
    static func matches(_ pattern: [UInt8], _ text: [UInt8]) -> Bool {
        var p = 0, t = 0, star = -1, mark = 0
        while t < text.count {
            if p < pattern.count && (pattern[p] == UInt8(ascii: "?") || pattern[p] == text[t]) {
                p += 1; t += 1
            } else if p < pattern.count && pattern[p] == UInt8(ascii: "*") {
                star = p; mark = t; p += 1
            } else if star >= 0 {
                p = star + 1; mark += 1; t = mark
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.count
    }
}

/// A plain revoked-keys file, as `ssh-keygen -Y verify -r` accepts besides a KRL: one public
/// key per line ("TYPE BASE64 [comment]"), blank lines and '#' comments skipped. Binary KRLs
/// are not read; a file that is one is refused rather than ignored.
public struct RevokedKeys: Sendable, Equatable {
    public var keys: Set<SSHPublicKey>

    public init(keys: Set<SSHPublicKey>) { self.keys = keys }

    public init(text: String) throws(SSHFormatError) {
        guard text.utf8.count <= AllowedSigners.maxBytes else { throw SSHFormatError("larger than 1 MiB") }
        if text.hasPrefix("SSHKRL") { throw SSHFormatError("a binary KRL; list the revoked public keys one per line instead") }
        var keys = Set<SSHPublicKey>()
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            if line.isEmpty || line.hasPrefix("#") { continue }
            do { keys.insert(try SSHPublicKey(line: line)) } catch { throw SSHFormatError("line \(index + 1): \(error.detail)") }
        }
        self.keys = keys
    }
}
