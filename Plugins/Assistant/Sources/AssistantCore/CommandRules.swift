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
public struct CommandRules: Sendable, Equatable {
    public var deny: [[String]] = []
    public var ask: [[String]] = []
    public var approve: [[String]] = []
    /// The level when no pattern decides; nil leaves it to "*" or the default by kind.
    public var fallback: PolicyLevel?

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
    public func level(for command: String) -> (level: PolicyLevel, pattern: String)? {
        guard let argvs = Self.commands(command, depth: 0) else {
            return deny.isEmpty ? nil : (.deny, "a command line that cannot be parsed, checked against deny patterns")
        }
        if let hit = first(deny, in: argvs) { return (.deny, hit) }
        if let hit = first(ask, in: argvs) { return (.ask, hit) }
        if !approve.isEmpty, !argvs.isEmpty,
           argvs.allSatisfy({ argv in approve.contains { Self.matches($0, argv) } }) {
            return (.approve, approve.first { p in argvs.contains { Self.matches(p, $0) } }.map { $0.joined(separator: " ") } ?? "")
        }
        return nil
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
    static func commands(_ command: String, depth: Int) -> [[String]]? {
        guard depth <= CommandClassifier.maxDepth, let script = try? ShellWords.parse(command) else { return nil }
        var out: [[String]] = []
        for argv in script.commands {
            guard let inner = unwrapped(argv[...], depth: depth) else { return nil }
            out += inner
        }
        return out
    }

    private static func unwrapped(_ argv: ArraySlice<ShellWord>, depth: Int) -> [[String]]? {
        guard depth <= CommandClassifier.maxDepth, let program = argv.first else { return nil }
        guard let wrapped = CommandWrappers.unwrap(program.text, argv.dropFirst()) else { return [argv.map(\.text)] }
        switch wrapped.inner {
        case .command(let inner): return unwrapped(inner, depth: depth + 1)
        case .script(let script): return commands(script, depth: depth + 1)
        case .nothing: return [argv.map(\.text)]
        case .unknown: return nil
        }
    }
}
