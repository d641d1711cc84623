/// Per-command rules for `ssh_exec`, as Claude Code's `Bash(git diff:*)`: a tool's entry in the
/// policy may be an object instead of one level,
///
///     "ssh_exec": { "deny": ["rm *", "systemctl *"], "approve": ["systemctl status *"], "default": "ask" }
///
/// Patterns are matched on the parsed argument vector of every simple command of the command
/// line, after the wrappers the classifier looks through (`sudo`, `env`, `timeout`, `bash -c`,
/// ...), never on the raw string: `sudo rm -rf /` is `rm -rf /`. A pattern is words; `*` as a
/// word matches one word, and as the last word any number (none included). Deny first: any
/// command that matches a deny pattern denies the whole line, and so does a line that cannot be
/// parsed (whether it holds a denied command cannot be told). Then ask, when any command
/// matches an ask pattern; then approve, only when every command matches an approve pattern.
/// Otherwise `default`, else the rules for the tool as if the entry named no patterns.
///
/// Per host and per tag, the same rules again, for calls on that saved host or on a host with
/// that tag:
///
///     "ssh_exec": { "deny": ["rm *"], "default": "ask",
///                   "tags": { "prod": { "deny": ["systemctl *"], "default": "deny" } },
///                   "hosts": { "staging-1": { "approve": ["systemctl restart app"] } } }
///
/// Every set that applies to the call (the tool's own, each of the host's tags, the host's)
/// is read together: a deny pattern of any of them denies, then an ask pattern of any asks,
/// then approve needs every command approved by the patterns of one set, and no other host
/// or tag set whose `default` is stricter than approve. When no pattern decides, the
/// strictest `default` of the host's and its tags' sets holds, else the tool's own.
///
/// Host names and tags are saved hosts' data, which sync carries from other devices: a scoped
/// set is only as trusted as whoever can edit those hosts. Strictest-wins keeps adding a tag
/// from ever loosening a host's rules; a hard limit belongs in the tool's own set.
public struct CommandRules: Sendable, Equatable {
    public var deny: [[String]] = []
    public var ask: [[String]] = []
    public var approve: [[String]] = []
    /// The level when no pattern decides; nil leaves it to "*" or the default by kind.
    public var fallback: PolicyLevel?
    /// Rules for calls on one saved host (by its name), and on hosts with one tag.
    public var hosts: [String: CommandRules] = [:]
    public var tags: [String: CommandRules] = [:]

    /// Patterns per list, and words per pattern, a file may give.
    public static let patternCap = 256
    public static let wordCap = 32

    public init(deny: [[String]] = [], ask: [[String]] = [], approve: [[String]] = [], fallback: PolicyLevel? = nil) {
        self.deny = deny
        self.ask = ask
        self.approve = approve
        self.fallback = fallback
    }

    /// The level the patterns give `command` and the pattern that gave it, or nil.
    ///
    /// Deny and ask see through disguises: the program by the last part of its path (`/bin/rm`
    /// is `rm`), and a line with a glob (`r[m] -rf /`, which the shell may expand into anything)
    /// or that cannot be parsed counts as matching when deny patterns exist. Approve sees none:
    /// the program must be a bare name, no word may be a glob, and no wrapper that changes what
    /// runs may be in the way (`sudo`, `env NAME=value`, `sudo -n`), so an approve of
    /// `systemctl status *` never runs `env LD_PRELOAD=x systemctl status` or `sudo systemctl status`.
    public func level(for command: String) -> (level: PolicyLevel, pattern: String)? {
        guard let line = Self.commands(command, depth: 0), !line.hasGlob else {
            return deny.isEmpty ? nil : (.deny, "a command line that cannot be parsed or holds a glob, checked against deny patterns")
        }
        let byName = line.argvs.map { argv in argv.isEmpty ? argv : [Self.baseName(argv[0])] + argv.dropFirst() }
        if let hit = first(deny, in: byName) { return (.deny, hit) }
        if let hit = first(ask, in: byName) { return (.ask, hit) }
        if !approve.isEmpty, !line.widened, !line.argvs.isEmpty,
           line.argvs.allSatisfy({ argv in !(argv.first ?? "").contains("/") && approve.contains { Self.matches($0, argv) } }) {
            return (.approve, approve.first { p in line.argvs.contains { Self.matches(p, $0) } }.map { $0.joined(separator: " ") } ?? "")
        }
        return nil
    }

    /// The level for `command` on `host` (the call's host argument) with `tags` (nil when
    /// they could not be read): the tool's own rules and those of the host and its tags, read
    /// together (see above), and where the level came from (`tags.prod.deny 'systemctl *'`,
    /// `hosts.db1.default`). nil when nothing decides (the tool's own `default` is the
    /// policy's level for the tool). Tag rules with unknown tags deny: whether they apply
    /// cannot be told.
    public func level(for command: String, host: String?, tags: [String]?) -> (level: PolicyLevel, origin: String)? {
        if !self.tags.isEmpty && tags == nil {
            return (.deny, "tags (the host's tags could not be read, so whether its tag rules apply cannot be told)")
        }
        var sets: [(scope: String, rules: CommandRules)] = [("", self)]
        for tag in Set(tags ?? []).sorted() { if let r = self.tags[tag] { sets.append(("tags.\(tag).", r)) } }
        if let host, let r = hosts[host] { sets.append(("hosts.\(host).", r)) }
        let hits = sets.compactMap { set in
            set.rules.level(for: command).map { (level: $0.level, scope: set.scope, origin: "\(set.scope)\($0.level.rawValue) '\($0.pattern)'") }
        }
        for wanted in [PolicyLevel.deny, .ask] {
            if let hit = hits.first(where: { $0.level == wanted }) { return (hit.level, hit.origin) }
        }
        // The host's and its tags' defaults, strictest first (deny > ask > approve).
        let defaults = sets.dropFirst().compactMap { set in set.rules.fallback.map { (level: $0, origin: "\(set.scope)default", scope: set.scope) } }
            .sorted { $0.level > $1.level }
        for hit in hits where hit.level == .approve {
            if let stricter = defaults.first(where: { $0.scope != hit.scope && $0.level > .approve }) {
                return (stricter.level, stricter.origin)
            }
            return (hit.level, hit.origin)
        }
        return defaults.first.map { ($0.level, $0.origin) }
    }

    static func baseName(_ program: String) -> String {
        program.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? program
    }

    /// The simple commands of a line, wrappers looked through; whether any word was a glob, and
    /// whether a wrapper that changes what runs (sudo, env with an assignment, any refused
    /// wrapper form) was looked through.
    struct Line {
        var argvs: [[String]] = []
        var hasGlob = false
        var widened = false
    }

    private func first(_ patterns: [[String]], in argvs: [[String]]) -> String? {
        for p in patterns where argvs.contains(where: { Self.matches(p, $0) }) { return p.joined(separator: " ") }
        return nil
    }

    static func matches(_ pattern: [String], _ argv: [String]) -> Bool {
        var i = 0
        for (n, word) in pattern.enumerated() {
            if word == "*" && n == pattern.count - 1 { return true }
            guard i < argv.count, word == "*" || word == argv[i] else { return false }
            i += 1
        }
        return i == argv.count
    }

    /// Every simple command's argument vector, wrappers looked through; nil when the line is
    /// outside what ShellWords parses or a wrapper's command cannot be told.
    static func commands(_ command: String, depth: Int) -> Line? {
        guard depth <= CommandClassifier.maxDepth, let script = try? ShellWords.parse(command) else { return nil }
        var line = Line()
        for argv in script.commands {
            guard unwrapped(argv[...], depth: depth, into: &line) else { return nil }
        }
        return line
    }

    private static func unwrapped(_ argv: ArraySlice<ShellWord>, depth: Int, into line: inout Line) -> Bool {
        guard depth <= CommandClassifier.maxDepth, let program = argv.first else { return false }
        if argv.contains(where: \.hasGlob) { line.hasGlob = true }
        guard let wrapped = CommandWrappers.unwrap(program.text, argv.dropFirst()) else {
            line.argvs.append(argv.map(\.text))
            return true
        }
        if wrapped.refusal != nil || program.text == "sudo" { line.widened = true }
        switch wrapped.inner {
        case .command(let inner): return unwrapped(inner, depth: depth + 1, into: &line)
        case .script(let script):
            guard let inner = commands(script, depth: depth + 1) else { return false }
            line.argvs += inner.argvs
            line.hasGlob = line.hasGlob || inner.hasGlob
            line.widened = line.widened || inner.widened
            return true
        case .nothing:
            line.argvs.append(argv.map(\.text))
            return true
        case .unknown: return false
        }
    }
}
