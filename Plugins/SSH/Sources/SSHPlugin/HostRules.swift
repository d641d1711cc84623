#if canImport(TermhostSDK)
import TermhostSDK   // VisibleText, BoundedNumber; the fuzz target compiles their files in instead
#endif

/// What a saved host (or identity) may hold, checked where the values enter: `hosts add|edit`,
/// `identities add|edit` and `hosts import`. Each check returns the rule that was broken, in
/// words, or nil; callers put the argument or file:line in front.
///
/// Why these rules: a name is typed back on command lines (`termhost ssh NAME`), where `@` and
/// `:` already mean an ad-hoc `user@host:port` and `,` separates jump hosts; a value that
/// begins with `-` reads as an option wherever it is handed on (option injection, as in
/// OpenSSH's CVE-2017-1000117 class); control characters would rewrite the terminal when the
/// value is listed; and a limit on length keeps every line of `hosts list` a line. Addresses
/// and users also refuse the shell's quoting and control characters, as OpenSSH 9.6 does for
/// its command line, because a server-side or ProxyCommand-style use would hand them to a shell.
///
/// This file needs only the standard library (and VisibleText, BoundedNumber and EnvironmentName), so the
/// ssh_config fuzz target compiles it as it is.
enum HostRules {
    /// Bytes in a name, address, user or jump hop; a DNS name has at most 253.
    static let maxLength = 255
    /// Bytes in an identity file's path (Linux PATH_MAX).
    static let maxPathLength = 4096
    /// Jump hosts in one route (as `termhost exec -J`).
    static let maxJumpHops = 8
    static let ports = 1...65535
    /// ServerAliveInterval: up to a day; 0 turns keepalives off.
    static let keepaliveSeconds = 0...86400
    /// ServerAliveCountMax: unanswered keepalives before giving up.
    static let keepaliveCounts = 1...1000

    /// A saved host's (or identity's) name.
    static func name(_ s: String) -> String? {
        if let common = common(s, what: "a name") { return common }
        if s.contains(where: { $0 == "@" || $0 == ":" }) { return "a name may not contain '@' or ':' (those mean an ad-hoc destination user@host:port)" }
        if s.contains(",") { return "a name may not contain ',' (it separates jump hosts)" }
        return nil
    }

    /// A host's address (HostName): a DNS name or an IP address (IPv6 with ':' and a `%zone`).
    static func address(_ s: String) -> String? {
        if let common = common(s, what: "an address") { return common }
        if s.contains("@") { return "an address may not contain '@' (give the user separately)" }
        if let bad = s.unicodeScalars.first(where: { shellMeta.contains($0) }) {
            return "an address may not contain '\(bad)' (quotes and shell characters are refused)"
        }
        return nil
    }

    /// A remote user name.
    static func user(_ s: String) -> String? {
        if let common = common(s, what: "a user name") { return common }
        if let bad = s.unicodeScalars.first(where: { shellMeta.contains($0) }) {
            return "a user name may not contain '\(bad)' (quotes and shell characters are refused)"
        }
        return nil
    }

    /// One hop of a jump route: a saved host's name or `[user@]host[:port]`.
    static func jumpHop(_ s: String) -> String? { common(s, what: "a jump host") }

    /// A jump route: at most `maxJumpHops` hops, each valid.
    static func jump(_ hops: [String]) -> String? {
        if hops.count > maxJumpHops { return "a jump route may have at most \(maxJumpHops) hosts, not \(hops.count)" }
        for hop in hops { if let why = jumpHop(hop) { return why } }
        return nil
    }

    /// An identity file's path (stored as written; `~/` is expanded when connecting).
    static func path(_ s: String) -> String? {
        if s.isEmpty { return "a key file's path may not be empty" }
        if s.utf8.count > maxPathLength { return "a key file's path may be at most \(maxPathLength) bytes long, not \(s.utf8.count)" }
        if !VisibleText.isPlain(s) { return "a key file's path may not contain control characters ('\(VisibleText.of(s))')" }
        return nil
    }

    /// Key files on one host (OpenSSH's SSH_MAX_IDENTITY_FILES).
    static let maxIdentityFiles = 100

    /// SendEnv or SetEnv entries on one host (OpenSSH has no limit; a record must stay small).
    static let maxEnvironmentEntries = 64
    /// Bytes in a SetEnv value (the server's limit is its own; sshd takes far more).
    static let maxEnvironmentValueBytes = 4096

    /// A SendEnv pattern: a variable name with `*` and `?`, or `-PATTERN`, which takes back
    /// the patterns before it that it matches (ssh_config(5)).
    static func sendEnv(_ s: String) -> String? {
        let pattern = s.utf8.first == UInt8(ascii: "-") ? String(s.dropFirst()) : s
        let asName = String(pattern.map { $0 == "*" || $0 == "?" ? "_" : $0 })
        guard !pattern.isEmpty, EnvironmentName.isValid(asName) else {
            return "a SendEnv pattern is a variable name (letters, digits, '_'; '*' and '?' match), optionally after '-', not '\(VisibleText.of(s))'"
        }
        return nil
    }

    /// A SetEnv entry, `NAME=VALUE` (the value may be empty).
    static func setEnv(_ s: String) -> String? {
        guard let equals = s.firstIndex(of: "="), EnvironmentName.isValid(String(s[..<equals])) else {
            return "a SetEnv entry is NAME=VALUE with NAME a variable name (letters, digits, '_', not starting with a digit), not '\(VisibleText.of(s))'"
        }
        let value = s[s.index(after: equals)...]
        if value.utf8.count > maxEnvironmentValueBytes { return "a SetEnv value may be at most \(maxEnvironmentValueBytes) bytes long, not \(value.utf8.count)" }
        if !VisibleText.isPlain(String(value)) { return "a SetEnv value may not contain control characters ('\(VisibleText.of(s))')" }
        return nil
    }

    /// The NAME of a SetEnv entry `NAME=VALUE`.
    static func setEnvName(_ entry: String) -> String { String(entry.prefix { $0 != "=" }) }

    /// SetEnv entries with only the first of each name (ssh's readconf keeps the first).
    static func firstOfEachName(_ entries: [String]) -> [String] {
        var seen = Set<String>()
        return entries.filter { seen.insert(setEnvName($0)).inserted }
    }

    /// A host's SendEnv or SetEnv list: at most `maxEnvironmentEntries`, each valid.
    static func environment(sendEnv: [String]?, setEnv: [String]?) -> String? {
        for (list, what) in [(sendEnv ?? [], "SendEnv"), (setEnv ?? [], "SetEnv")] where list.count > maxEnvironmentEntries {
            return "a host may have at most \(maxEnvironmentEntries) \(what) entries, not \(list.count)"
        }
        for p in sendEnv ?? [] { if let why = HostRules.sendEnv(p) { return why } }
        for e in setEnv ?? [] { if let why = HostRules.setEnv(e) { return why } }
        return nil
    }

    /// A tag shown by `hosts list`.
    static func tag(_ s: String) -> String? { common(s, what: "a tag") }

    static func port(_ text: String, name: String) throws(NumberOutOfRange) -> Int {
        try BoundedNumber.integer(text, name: name, in: ports)
    }

    /// The rules a stored or imported record must meet, first broken one first (for records
    /// read back from the store, which older versions saved unchecked, and for the fuzz target).
    static func check(name: String, address: String, port: Int, user: String?, identityFile: String?,
                      jump: [String]?, keepaliveInterval: Int? = nil, keepaliveCountMax: Int? = nil,
                      sendEnv: [String]? = nil, setEnv: [String]? = nil, certificateFile: String? = nil,
                      hostKeyAlias: String? = nil, moreIdentityFiles: [String]? = nil) -> String? {
        if let why = HostRules.name(name) { return "name: \(why)" }
        if let why = HostRules.address(address) { return "address: \(why)" }
        do {
            _ = try BoundedNumber.check(port, name: "port", in: ports)
            if let k = keepaliveInterval { _ = try BoundedNumber.check(k, name: "keepalive", in: keepaliveSeconds, unit: "seconds") }
            if let k = keepaliveCountMax { _ = try BoundedNumber.check(k, name: "keepalive count", in: keepaliveCounts, unit: "probes") }
        } catch { return error.description }
        if let u = user, let why = HostRules.user(u) { return "user: \(why)" }
        if let f = identityFile, let why = HostRules.path(f) { return "identity file: \(why)" }
        if let f = certificateFile, let why = HostRules.path(f) { return "certificate file: \(why)" }
        if let more = moreIdentityFiles {
            if more.count >= maxIdentityFiles { return "a host may have at most \(maxIdentityFiles) identity files, not \(more.count + 1)" }
            for f in more { if let why = HostRules.path(f) { return "identity file: \(why)" } }
        }
        if let a = hostKeyAlias, let why = HostRules.address(a) { return "host key alias: \(why)" }
        if let j = jump, let why = HostRules.jump(j) { return "jump: \(why)" }
        if let why = HostRules.environment(sendEnv: sendEnv, setEnv: setEnv) { return "environment: \(why)" }
        return nil
    }

    /// Characters a shell would act on, refused in addresses and users.
    static let shellMeta: Set<Unicode.Scalar> = ["'", "\"", "`", "$", "\\", ";", "&", "<", ">", "|", "(", ")", "{", "}"]

    /// Not empty, not too long, no control characters, no white space, no leading '-'.
    private static func common(_ s: String, what: String) -> String? {
        if s.isEmpty { return "\(what) may not be empty" }
        if s.utf8.count > maxLength { return "\(what) may be at most \(maxLength) bytes long, not \(s.utf8.count)" }
        if !VisibleText.isPlain(s) { return "\(what) may not contain control characters ('\(VisibleText.of(s))')" }
        if s.unicodeScalars.contains(where: { $0.properties.isWhitespace }) { return "\(what) may not contain spaces" }
        // The first byte, not the first Character: "-" and a combining mark are one Character,
        // which is not "-", yet a program reading the bytes sees an option.
        if s.utf8.first == UInt8(ascii: "-") { return "\(what) may not begin with '-' (it would read as an option)" }
        return nil
    }
}
