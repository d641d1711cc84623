#if canImport(TermhostSDK)
import TermhostSDK   // VisibleText, BoundedNumber; the fuzz target compiles their files in instead
#endif

/// OpenSSH client configuration (`~/.ssh/config`) read as bytes into the hosts it names, for
/// `termhost hosts import`. Understood: Host, HostName (with %h), User, Port, IdentityFile,
/// CertificateFile, HostKeyAlias, ProxyJump, ForwardAgent (yes or no), SendEnv, SetEnv,
/// ServerAliveInterval, ServerAliveCountMax, Include, Match (not exec). Everything else is reported, never executed: ProxyCommand, LocalCommand
/// and `Match exec` run programs, and an import must not.
///
/// Design:
/// - Bytes, not Characters: Swift reads "\r\n" as ONE Character, so splitting text on "\n"
///   kept a CRLF file as one line and made hosts of its keywords. Lines end at LF; trailing
///   white space, CR included, goes, as in OpenSSH's readconf.
/// - Every malformed line (no keyword, no value, an unterminated quote, not UTF-8, too long)
///   is a warning naming file:line, and the rest of the file is still read.
/// - A value that breaks a rule (HostRules, ports via BoundedNumber) stays attached to its
///   line: each host that would take it is skipped with file:line and the rule, others import.
/// - Linear: a host's settings come from the blocks naming it (a dictionary from name to
///   blocks) and from the blocks with patterns, whose number is capped (`maxPatternBlocks`);
///   never from a scan of every block for every host.
/// - Bounded: at most `maxInputBytes` read in all (Includes counted in), lines of at most
///   `maxLineBytes`, Include nested at most `maxIncludeDepth` deep and never into a file that
///   is already being read, at most `maxFiles` files, at most `maxHosts` hosts.
///
/// Files come through `Files`, so this needs only the standard library: the fuzz target feeds
/// it bytes, the plugin the file system (SSHConfigImport).
struct SSHConfigParser {
    static let maxInputBytes = 16 << 20
    static let maxLineBytes = 16 << 10
    static let maxIncludeDepth = 16
    static let maxPatternBlocks = 256
    static let maxHosts = 100_000
    static let maxFiles = 1000

    enum Loaded {
        case bytes([UInt8])
        /// Larger than the limit asked for (its size in bytes, or limit + 1 when not known).
        case tooLarge(Int)
        /// Why it cannot be read: "cannot be read (Permission denied)".
        case failed(String)
    }

    /// How files are found: `expand` turns an Include argument into paths (globs, `~`, relative
    /// to ~/.ssh); `load` reads one file, at most `limit` bytes.
    struct Files {
        var expand: (String) -> [String]
        var load: (_ path: String, _ limit: Int) -> Loaded
        /// The local user: `Match localuser`, and `Match user` before any User applies.
        var localUser = ""
    }

    /// One host to save, with its effective settings (OpenSSH's rule: the first value wins).
    struct Host: Equatable {
        var name: String
        var address: String
        var port: Int
        var user: String?
        var identityFile: String?
        /// IdentityFile lines after the first, from every matching block in order (ssh tries
        /// them all).
        var moreIdentityFiles: [String] = []
        var jump: [String]?
        /// ForwardAgent yes.
        var forwardAgent = false
        var certificateFile: String? = nil
        var hostKeyAlias: String? = nil
        var keepaliveInterval: Int? = nil
        var keepaliveCountMax: Int? = nil
        /// Keywords that applied to this host and are not carried, in the order met.
        var notCarried: [String] = []
        /// SendEnv's patterns, every matching block's in order, `-PATTERN` applied as ssh does.
        var sendEnv: [String] = []
        /// SetEnv's entries: the first SetEnv line that applies, whole, as ssh takes it.
        var setEnv: [String] = []
        /// file:line of the Host line that first named it.
        var at: String
        /// A `Host` pattern (`web-*`) saved as a template: a name typed later that it matches
        /// connects with its settings, and `%h` in its address becomes that name.
        var template = false
    }

    private(set) var hosts: [Host] = []
    /// Lines not imported: file:line and why.
    private(set) var warnings: [String] = []
    /// Hosts not imported: file:line of the value at fault, the host, and the rule.
    private(set) var skipped: [String] = []
    /// Set when the file itself is over the limit: nothing is imported.
    private(set) var refused: String? = nil

    enum Key: CaseIterable {
        case hostName, user, port, identityFile, proxyJump, forwardAgent, certificateFile, sendEnv, setEnv, hostKeyAlias,
             serverAliveInterval, serverAliveCountMax
    }

    private struct Setting {
        var value: String
        /// Every argument, for the keywords that take several (SendEnv, SetEnv).
        var values: [String] = []
        var at: String
        var problem: String?
    }

    private struct Pattern {
        var bytes: [UInt8]   // lower-cased
        var negated: Bool
    }

    private struct Block {
        var patterns: [Pattern]
        var settings: [Key: Setting] = [:]
        /// A pattern with * or ?: looked at for every host. Otherwise reached through `index`.
        var wildcard: Bool
        /// A Match block's criteria (looked at for every host, with what is resolved so far).
        var match: [MatchCriterion]? = nil
        /// Keywords of this block termhost does not carry (each also a file:line warning),
        /// listed again for every host the block applies to.
        var notCarried: [String] = []

        func matches(_ name: [UInt8]) -> Bool {
            var positive = false
            for p in patterns where SSHConfigParser.glob(p.bytes, name) {
                if p.negated { return false }
                positive = true
            }
            return positive
        }
    }

    private var blocks: [Block] = []
    private var current = 0
    /// Blocks without wildcards by the (lower-cased) names they list, ascending.
    private var index: [[UInt8]: [Int]] = [:]
    /// Blocks with wildcards, ascending.
    private var wildcardBlocks: [Int] = []
    private var names: [(name: String, at: String, template: Bool)] = []
    private var seen = Set<String>()
    private var consumed = 0
    private var warnedHostLimit = false
    private var filesRead = 0
    private let files: Files

    init(file: String, files: Files) {
        self.files = files
        // Lines before the first Host apply to every host.
        blocks.append(Block(patterns: [Pattern(bytes: [UInt8(ascii: "*")], negated: false)], wildcard: true))
        wildcardBlocks.append(0)
        read(file, depth: 0, reading: [file], from: nil)
        if refused == nil { resolve() }
    }

    // MARK: - Reading

    private mutating func read(_ file: String, depth: Int, reading: [String], from include: String?) {
        let shown = VisibleText.of(file)
        filesRead += 1
        guard filesRead <= SSHConfigParser.maxFiles else {
            warnings.append("\(include.map { "\($0): " } ?? "")\(shown): more than \(SSHConfigParser.maxFiles) files read through Include; skipped")
            return
        }
        let limit = SSHConfigParser.maxInputBytes - consumed
        let bytes: [UInt8]
        switch files.load(file, limit) {
        case .bytes(let b) where b.count <= limit: bytes = b
        case .bytes(let b): return tooLarge(shown, size: b.count, include: include)
        case .tooLarge(let size): return tooLarge(shown, size: size, include: include)
        case .failed(let why):
            warnings.append("\(include.map { "\($0): " } ?? "")\(shown): \(why); skipped")
            return
        }
        consumed += bytes.count
        var lineNumber = 0
        var start = 0
        while start < bytes.count {
            lineNumber += 1
            var end = start
            while end < bytes.count && bytes[end] != 0x0a { end += 1 }
            line(bytes[start..<end], at: "\(shown):\(lineNumber)", file: file, depth: depth, reading: reading)
            start = end + 1
        }
    }

    private mutating func tooLarge(_ shown: String, size: Int, include: String?) {
        let limit = "an import reads at most \(SSHConfigParser.maxInputBytes >> 20) MiB (\(SSHConfigParser.maxInputBytes) bytes)"
        if let include {
            warnings.append("\(include): \(shown): skipped: it would take the import past the limit (\(limit), Includes counted in)")
        } else {
            refused = "\(shown) is larger than the limit (\(size) bytes; \(limit))"
        }
    }

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0d || b == 0x0c || b == 0x0b }

    private mutating func line(_ raw: ArraySlice<UInt8>, at: String, file: String, depth: Int, reading: [String]) {
        var s = raw.startIndex, e = raw.endIndex
        while s < e && SSHConfigParser.isSpace(raw[s]) { s += 1 }
        while e > s && SSHConfigParser.isSpace(raw[e - 1]) { e -= 1 }
        let text = raw[s..<e]
        if text.isEmpty || text.first == UInt8(ascii: "#") { return }
        if text.count > SSHConfigParser.maxLineBytes {
            warnings.append("\(at): the line is \(text.count) bytes long, more than the \(SSHConfigParser.maxLineBytes) read; skipped")
            return
        }
        guard String(validating: text, as: UTF8.self) != nil else {
            warnings.append("\(at): not UTF-8 text ('\(VisibleText.of(bytes: text.prefix(60)))'); skipped")
            return
        }
        // The keyword ends at white space or '='; one '=' may stand between it and the values.
        var i = text.startIndex
        while i < text.endIndex && !SSHConfigParser.isSpace(text[i]) && text[i] != UInt8(ascii: "=") { i += 1 }
        let keywordBytes = text[text.startIndex..<i]
        while i < text.endIndex && SSHConfigParser.isSpace(text[i]) { i += 1 }
        if i < text.endIndex && text[i] == UInt8(ascii: "=") { i += 1 }
        guard !keywordBytes.isEmpty else {
            warnings.append("\(at): no keyword before '=' ('\(VisibleText.of(bytes: text.prefix(60)))'); skipped")
            return
        }
        let keyword = String(decoding: keywordBytes, as: UTF8.self)
        let shownKeyword = VisibleText.of(keyword)
        let args: [String]
        switch SSHConfigParser.arguments(text[i...]) {
        case .success(let a): args = a
        case .failure(let why):
            warnings.append("\(at): \(shownKeyword): \(why.message); skipped")
            return
        }
        switch keyword.lowercased() {
        case "host": host(args, at: at)
        case "match": match(args, at: at)
        case "include": include(args, at: at, depth: depth, reading: reading)
        case "hostname": setting(.hostName, keyword: shownKeyword, args, at: at)
        case "user": setting(.user, keyword: shownKeyword, args, at: at)
        case "port": setting(.port, keyword: shownKeyword, args, at: at)
        case "identityfile": listSetting(.identityFile, keyword: shownKeyword, args, at: at)
        case "proxyjump": setting(.proxyJump, keyword: shownKeyword, args, at: at)
        case "certificatefile": setting(.certificateFile, keyword: shownKeyword, args, at: at)
        case "hostkeyalias": setting(.hostKeyAlias, keyword: shownKeyword, args, at: at)
        case "serveraliveinterval": setting(.serverAliveInterval, keyword: shownKeyword, args, at: at)
        case "serveralivecountmax": setting(.serverAliveCountMax, keyword: shownKeyword, args, at: at)
        case "sendenv", "setenv": listSetting(keyword.lowercased() == "sendenv" ? .sendEnv : .setEnv, keyword: shownKeyword, args, at: at)
        case "forwardagent":
            // OpenSSH also takes an agent socket path or $VARIABLE here; termhost forwards only
            // SSH_AUTH_SOCK's agent, so those are left out rather than read as yes.
            if let value = args.first, args.count == 1, !SSHConfigParser.forwardAgentWords.keys.contains(value.lowercased()) {
                warnings.append("\(at): \(shownKeyword) \(VisibleText.of(value)): only yes or no is imported (termhost forwards the agent of SSH_AUTH_SOCK); not imported")
                notCarried(shownKeyword)
            } else {
                setting(.forwardAgent, keyword: shownKeyword, args, at: at)
            }
        case "proxycommand", "localcommand", "permitlocalcommand":
            warnings.append("\(at): \(shownKeyword) is never executed by termhost; not imported")
            notCarried(shownKeyword)
        default:
            warnings.append("\(at): \(shownKeyword) is not supported; not imported")
            notCarried(shownKeyword)
        }
    }

    private mutating func notCarried(_ keyword: String) {
        guard !blocks[current].patterns.isEmpty, !blocks[current].notCarried.contains(keyword) else { return }
        blocks[current].notCarried.append(keyword)
    }

    /// One criterion of a Match line: `host`, `originalhost`, `user`, `localuser` with a
    /// pattern list, or `all`; `!` before it negates it.
    private struct MatchCriterion {
        var kind: String
        var patterns: [Pattern] = []
        var negated = false
    }

    /// `Match` evaluated as ssh evaluates it, in file order with what is resolved so far (the
    /// HostName and User set above it). `exec` is never run, and canonical, final and the rest
    /// cannot be judged here: such a block applies to no host, and says so.
    private mutating func match(_ args: [String], at: String) {
        var criteria: [MatchCriterion] = []
        var refused: String? = nil
        var rest = args[...]
        while let word = rest.popFirst() {
            var kind = word.lowercased()
            let negated = kind.hasPrefix("!")
            if negated { kind.removeFirst() }
            switch kind {
            case "all": criteria.append(MatchCriterion(kind: kind, negated: negated))
            case "host", "originalhost", "user", "localuser":
                guard let list = rest.popFirst() else { refused = "Match \(kind) needs a pattern"; break }
                let patterns = list.split(separator: ",").map { p -> Pattern in
                    let negative = p.hasPrefix("!")
                    let text = negative ? String(p.dropFirst()) : String(p)
                    return Pattern(bytes: Array((kind.hasSuffix("host") ? text.lowercased() : text).utf8), negated: negative)
                }
                criteria.append(MatchCriterion(kind: kind, patterns: patterns, negated: negated))
            case "exec": refused = "Match exec would run a program, which termhost never does"
            default: refused = "Match \(VisibleText.of(kind)) cannot be evaluated by termhost"
            }
            if refused != nil { break }
        }
        if criteria.isEmpty && refused == nil { refused = "Match needs a criterion" }
        if let refused { warnings.append("\(at): \(refused); the block applies to no host and its lines are skipped") }
        addBlock(Block(patterns: [Pattern(bytes: [UInt8(ascii: "*")], negated: false)], wildcard: true,
                       match: refused == nil ? criteria : []), at: at)
    }

    private mutating func host(_ args: [String], at: String) {
        guard !args.isEmpty else {
            warnings.append("\(at): Host needs at least one pattern; the lines up to the next Host or Match apply to no host")
            blocks.append(Block(patterns: [], wildcard: false))
            current = blocks.count - 1
            return
        }
        var patterns: [Pattern] = []
        for arg in args {
            let negated = arg.hasPrefix("!")
            patterns.append(Pattern(bytes: Array((negated ? String(arg.dropFirst()) : arg).lowercased().utf8), negated: negated))
        }
        let wildcard = patterns.contains { !$0.negated && $0.bytes.contains { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") } }
        addBlock(Block(patterns: wildcard || patterns.contains(where: { !$0.negated }) ? patterns : [], wildcard: wildcard), at: at)
        for arg in args where !arg.hasPrefix("!") && !arg.contains("*") && !arg.contains("?") {
            addName(arg, at: at)
        }
        // A wildcard pattern is also a template, as ssh applies it to any name typed later;
        // not when the line negates names, which a template could not carry.
        if wildcard && !patterns.contains(where: \.negated) {
            for arg in args where arg.contains("*") || arg.contains("?") { addName(arg, at: at, template: true) }
        }
    }

    /// Appends a block and files it under its names, or with the wildcard blocks (capped: each
    /// is looked at for every host).
    private mutating func addBlock(_ block: Block, at: String) {
        var block = block
        if block.wildcard && wildcardBlocks.count >= SSHConfigParser.maxPatternBlocks {
            warnings.append("\(at): more than \(SSHConfigParser.maxPatternBlocks) Host blocks with * or ?; this one's lines are skipped")
            block = Block(patterns: [], wildcard: false)
        }
        blocks.append(block)
        current = blocks.count - 1
        if block.wildcard {
            wildcardBlocks.append(current)
        } else {
            for p in block.patterns where !p.negated && index[p.bytes]?.last != current {
                index[p.bytes, default: []].append(current)
            }
        }
    }

    private mutating func addName(_ name: String, at: String, template: Bool = false) {
        guard !seen.contains(name) else { return }
        if let why = HostRules.name(name) {
            seen.insert(name)
            skipped.append("\(at): host '\(VisibleText.of(name))' not imported: \(why)")
            return
        }
        guard names.count < SSHConfigParser.maxHosts else {
            if !warnedHostLimit {
                warnings.append("\(at): more than \(SSHConfigParser.maxHosts) hosts; '\(name)' and the hosts after it are not imported")
                warnedHostLimit = true
            }
            return
        }
        seen.insert(name)
        names.append((name, at, template))
    }

    private mutating func include(_ args: [String], at: String, depth: Int, reading: [String]) {
        guard !args.isEmpty else { warnings.append("\(at): Include needs a file; skipped"); return }
        guard depth + 1 < SSHConfigParser.maxIncludeDepth else {
            warnings.append("\(at): Include nested more than \(SSHConfigParser.maxIncludeDepth) deep; skipped")
            return
        }
        let enclosing = blocks[current]
        let before = blocks.count
        for arg in args {
            for path in files.expand(arg) {
                if reading.contains(path) {
                    warnings.append("\(at): Include of \(VisibleText.of(path)) makes a loop (it is being read); skipped")
                    continue
                }
                read(path, depth: depth + 1, reading: reading + [path], from: at)
            }
        }
        // OpenSSH goes on under the enclosing Host after an Include, whatever Host lines the
        // included files had.
        if blocks.count != before { addBlock(Block(patterns: enclosing.patterns, wildcard: enclosing.wildcard, match: enclosing.match), at: at) }
    }

    private mutating func setting(_ key: Key, keyword: String, _ args: [String], at: String) {
        guard let value = args.first else {
            warnings.append("\(at): \(keyword) needs a value; skipped")
            return
        }
        guard blocks[current].settings[key] == nil, !blocks[current].patterns.isEmpty else { return }
        var problem: String? = nil
        if args.count > 1 {
            problem = "\(keyword) takes one value, not \(args.count)"
        } else {
            switch key {
            case .hostName:
                if let bad = SSHConfigParser.unknownToken(value) { problem = "HostName may use only %h and %%, not '\(VisibleText.of(bad))'" }
            case .user: problem = HostRules.user(value).map { "User: \($0)" }
            case .port:
                do { _ = try HostRules.port(value, name: "Port") } catch { problem = error.description }
            case .certificateFile: problem = HostRules.path(value).map { "CertificateFile: \($0)" }
            case .hostKeyAlias: problem = HostRules.address(value).map { "HostKeyAlias: \($0)" }
            case .serverAliveInterval:
                do { _ = try BoundedNumber.integer(value, name: "ServerAliveInterval", in: HostRules.keepaliveSeconds, unit: "seconds") } catch { problem = error.description }
            case .serverAliveCountMax:
                do { _ = try BoundedNumber.integer(value, name: "ServerAliveCountMax", in: HostRules.keepaliveCounts, unit: "probes") } catch { problem = error.description }
            case .sendEnv, .setEnv, .identityFile: break   // listSetting
            case .forwardAgent: break   // yes or no: checked where it is read
            case .proxyJump:
                if value.lowercased() != "none" {
                    problem = HostRules.jump(value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)).map { "ProxyJump: \($0)" }
                }
            }
        }
        blocks[current].settings[key] = Setting(value: value, at: at, problem: problem)
    }

    /// IdentityFile and SendEnv (a block's lines add up, as every matching block's do) and
    /// SetEnv (the first line wins, whole), each entry checked as `hosts edit` checks it.
    private mutating func listSetting(_ key: Key, keyword: String, _ args: [String], at: String) {
        guard !args.isEmpty else {
            warnings.append("\(at): \(keyword) needs a value; skipped")
            return
        }
        guard !blocks[current].patterns.isEmpty else { return }
        var problem: String? = key == .identityFile && args.count > 1 ? "\(keyword) takes one value, not \(args.count)" : nil
        for arg in args where problem == nil {
            let why = switch key {
            case .sendEnv: HostRules.sendEnv(arg)
            case .identityFile: HostRules.path(arg)
            default: HostRules.setEnv(arg)
            }
            if let why { problem = "\(keyword): \(why)" }
        }
        if var existing = blocks[current].settings[key] {
            guard key != .setEnv else { return }
            existing.values += args
            existing.problem = existing.problem ?? problem
            blocks[current].settings[key] = existing
        } else {
            // SetEnv: the first entry of a name wins within the line too, as ssh keeps it.
            let values = key == .setEnv ? HostRules.firstOfEachName(args) : args
            blocks[current].settings[key] = Setting(value: args[0], values: values, at: at, problem: problem)
        }
    }

    /// The first `%x` other than `%h` and `%%`, or nil.
    private static func unknownToken(_ s: String) -> String? {
        var it = s.unicodeScalars.makeIterator()
        while let c = it.next() {
            guard c == "%" else { continue }
            guard let n = it.next() else { return "%" }
            if n != "h" && n != "%" { return "%" + String(n) }
        }
        return nil
    }

    // MARK: - Resolving

    private mutating func resolve() {
        hosts.reserveCapacity(names.count)
        for (name, at, template) in names {
            let lower = Array(name.lowercased().utf8)
            var found: [Key: Setting] = [:]
            var sendEnv: [String] = []
            var identityFiles: [String] = []
            var notCarried: [String] = []
            // Ascending merge of the blocks naming this host and the wildcard blocks: every one,
            // since IdentityFile and SendEnv add up across them.
            let named = index[lower] ?? []
            var a = 0, w = 0
            while a < named.count || w < wildcardBlocks.count {
                let b: Int
                if w == wildcardBlocks.count || (a < named.count && named[a] < wildcardBlocks[w]) { b = named[a]; a += 1 } else { b = wildcardBlocks[w]; w += 1 }
                let block = blocks[b]
                guard !block.settings.isEmpty || !block.notCarried.isEmpty else { continue }
                if let criteria = block.match {
                    let host = found[.hostName].map { SSHConfigParser.expandHost($0.value, name: name) } ?? name
                    guard !criteria.isEmpty, criteria.allSatisfy({ matches($0, host: host, original: name, user: found[.user]?.value) }) else { continue }
                } else if !block.matches(lower) {
                    continue
                }
                for (key, s) in block.settings where found[key] == nil { found[key] = s }
                for keyword in block.notCarried where !notCarried.contains(keyword) { notCarried.append(keyword) }
                for key in [Key.sendEnv, .identityFile] {
                    guard let s = block.settings[key] else { continue }
                    if s.problem != nil && found[key]?.problem == nil { found[key] = s }
                    if key == .sendEnv { sendEnv = SSHConfigParser.addSendEnv(s.values, to: sendEnv) }
                    else { for file in s.values where !identityFiles.contains(file) { identityFiles.append(file) } }
                }
            }
            if identityFiles.count > HostRules.maxIdentityFiles, found[.identityFile]?.problem == nil {
                found[.identityFile]?.problem = "IdentityFile: a host may have at most \(HostRules.maxIdentityFiles), not \(identityFiles.count)"
            }
            if let why = HostRules.environment(sendEnv: sendEnv, setEnv: found[.setEnv]?.values) {
                let key: Key = found[.sendEnv] != nil ? .sendEnv : .setEnv
                if found[key]?.problem == nil { found[key]?.problem = "SendEnv/SetEnv: \(why)" }
            }
            if let bad = Key.allCases.compactMap({ found[$0] }).first(where: { $0.problem != nil }) {
                skipped.append("\(bad.at): host '\(name)' not imported: \(bad.problem!)")
                continue
            }
            // A template keeps %h for the name it will be used with.
            let address = template ? found[.hostName]?.value ?? "%h" : found[.hostName].map { SSHConfigParser.expandHost($0.value, name: name) } ?? name
            if let why = HostRules.address(address) {
                skipped.append("\(found[.hostName]?.at ?? at): host '\(name)' not imported: HostName: \(why)")
                continue
            }
            let jump = found[.proxyJump].flatMap { $0.value.lowercased() == "none" ? nil : $0.value.split(separator: ",").map(String.init) }
            hosts.append(Host(name: name, address: address, port: found[.port].flatMap { Int($0.value) } ?? 22,
                              user: found[.user]?.value, identityFile: identityFiles.first, moreIdentityFiles: Array(identityFiles.dropFirst()), jump: jump,
                              forwardAgent: found[.forwardAgent].flatMap { SSHConfigParser.forwardAgentWords[$0.value.lowercased()] } ?? false,
                              certificateFile: found[.certificateFile]?.value, hostKeyAlias: found[.hostKeyAlias]?.value,
                              keepaliveInterval: found[.serverAliveInterval].flatMap { Int($0.value) },
                              keepaliveCountMax: found[.serverAliveCountMax].flatMap { Int($0.value) },
                              notCarried: notCarried, sendEnv: sendEnv, setEnv: found[.setEnv]?.values ?? [], at: at, template: template))
        }
    }

    /// Whether a Match criterion holds for a host resolved so far: ssh's match_pattern_list,
    /// a negated pattern that matches failing the whole list.
    private func matches(_ c: MatchCriterion, host: String, original: String, user: String?) -> Bool {
        let value: String
        switch c.kind {
        case "all": return !c.negated
        case "host": value = host.lowercased()
        case "originalhost": value = original.lowercased()
        case "user": value = user ?? files.localUser
        default: value = files.localUser
        }
        let bytes = Array(value.utf8)
        var positive = false
        for p in c.patterns where SSHConfigParser.glob(p.bytes, bytes) {
            if p.negated { positive = false; break }
            positive = true
        }
        return positive != c.negated
    }

    /// SendEnv's patterns added to a list as ssh reads them: `-PATTERN` takes back the
    /// patterns before it that it matches (readconf.c).
    static func addSendEnv(_ patterns: [String], to list: [String]) -> [String] {
        var list = list
        for p in patterns {
            if p.utf8.first == UInt8(ascii: "-") {
                let removal = Array(p.dropFirst().utf8)
                list.removeAll { glob(removal, Array($0.utf8)) }
            } else if !list.contains(p) {
                list.append(p)
            }
        }
        return list
    }

    /// ForwardAgent's flag values (readconf's multistate flag: yes, no, true, false).
    static let forwardAgentWords = ["yes": true, "true": true, "no": false, "false": false]

    static func expandHost(_ s: String, name: String) -> String {
        guard s.contains("%") else { return s }
        var out = ""
        var it = s.unicodeScalars.makeIterator()
        while let c = it.next() {
            if c == "%", let n = it.next() { out += n == "h" ? name : String(n) } else { out.unicodeScalars.append(c) }
        }
        return out
    }
}
