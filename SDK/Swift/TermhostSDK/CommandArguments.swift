/// The command-line parser for plugin commands: what a command accepts is declared once, and
/// every command refuses what it does not accept in the same words.
///
/// Design: a command's arguments are options (`--json`, `--port 22`, `--port=22`, `-P 22`,
/// `-L8080:host:80`) and positional arguments, in any order, until `--`, after which everything
/// is positional. A command whose positional arguments carry a command line of their own
/// (`termhost exec HOST COMMAND --flag`) ends its options at the first positional argument
/// instead. A value option takes the next argument whatever it looks like (`--user -l` gives
/// `-l`, for the command's own checks to refuse), as getopt does. `--help` and `-h` are
/// recognised by every command that does not declare them itself.
///
/// Every refusal is one line, `<command>: <problem>`, with the user's text shown through
/// `VisibleText`; a problem whose cure is the command's shape adds the usage after it:
///
///     termhost metrics add: unknown option '--intreval'. Did you mean '--interval'?
///     usage: termhost metrics add HOST [--interval SECONDS] [--interface NAME]...
///     termhost forward add: option '--name' needs a value
///     termhost hosts list: option '--json' takes no value
///     termhost sftp: unexpected argument 'x'
///     usage: termhost sftp [-P PORT] HOST ...
///     termhost metrics add: --interval must be a whole number of seconds from 1 to 3600, not '0'
///
/// and exits with status 2 (`CommandUsageError.exitStatus`).
///
/// This file uses nothing but the standard library (and `VisibleText`, `BoundedNumber`), so
/// fuzz targets compile it as it is.
public struct CommandArguments: Sendable {
    /// One option a command accepts.
    public struct Option: Sendable, Equatable {
        /// The name errors and `ParsedArguments` use: `--port`, `-P`.
        public let name: String
        /// Other spellings of the same option: `-p` for `--port`, `--recursive` for `-r`.
        public let aliases: [String]
        /// Whether the option takes a value (`--port 22`) or is a flag (`--json`).
        public let takesValue: Bool

        /// A flag: `--json`. Giving it a value (`--json=yes`) is a usage error.
        public static func flag(_ name: String, _ aliases: String...) -> Option {
            Option(name: name, aliases: aliases, takesValue: false)
        }

        /// An option with a value: `--port 22` or `--port=22`; a short one also `-P 22` or `-P22`.
        public static func value(_ name: String, _ aliases: String...) -> Option {
            Option(name: name, aliases: aliases, takesValue: true)
        }

        var spellings: [String] { [name] + aliases }
    }

    /// The command as the user typed it, without its arguments: `termhost forward add`.
    public let command: String
    /// Shown after an unknown option or an unexpected argument; nil shows nothing.
    public let usage: String?
    /// Every option the command accepts; anything else starting with `-` is refused.
    public let options: [Option]
    /// Options end at the first positional argument: it and everything after it are positional,
    /// as typed (`termhost exec -J hop HOST ls -l`).
    public let optionsEndAtFirstArgument: Bool
    /// More positional arguments than this are refused as unexpected; nil accepts any number.
    public let maxArguments: Int?

    public init(_ command: String, usage: String? = nil, options: [Option] = [],
                optionsEndAtFirstArgument: Bool = false, maxArguments: Int? = nil) {
        self.command = command
        self.usage = usage
        self.options = options
        self.optionsEndAtFirstArgument = optionsEndAtFirstArgument
        self.maxArguments = maxArguments
    }

    /// The option spelled `spelling` (its name or an alias), if the command declares one.
    public func option(_ spelling: String) -> Option? {
        options.first { $0.spellings.contains(spelling) }
    }

    /// Reads `arguments` (those after the command's name) in order. Throws the first problem
    /// found; `--help` is not one (see `ParsedArguments.help`).
    public func parse<Arguments: Collection<String>>(_ arguments: Arguments) throws(CommandUsageError) -> ParsedArguments {
        var parsed = ParsedArguments(command: command)
        var rest = arguments[...]
        var optionsEnded = false
        while let a = rest.popFirst() {
            if optionsEnded || a == "-" || !a.hasPrefix("-") {
                parsed.arguments.append(a)
                if optionsEndAtFirstArgument { optionsEnded = true }
                continue
            }
            if a == "--" { optionsEnded = true; continue }
            var spelling = a, inline: String? = nil
            if a.hasPrefix("--"), let equals = a.firstIndex(of: "=") {
                spelling = String(a[..<equals])
                inline = String(a[a.index(after: equals)...])
            }
            if let option = option(spelling) {
                if !option.takesValue {
                    guard inline == nil else { throw error("option '\(VisibleText.of(spelling))' takes no value") }
                    parsed.occurrences.append(.init(option: option.name, spelled: spelling, value: nil))
                } else if let value = inline ?? rest.popFirst() {
                    parsed.occurrences.append(.init(option: option.name, spelled: spelling, value: value))
                } else {
                    throw error("option '\(VisibleText.of(spelling))' needs a value")
                }
            } else if !a.hasPrefix("--"), a.count > 2, let option = option(String(a.prefix(2))), option.takesValue {
                parsed.occurrences.append(.init(option: option.name, spelled: String(a.prefix(2)), value: String(a.dropFirst(2))))
            } else if spelling == "--help" || spelling == "-h" {
                parsed.help = true
            } else {
                throw unknownOption(spelling)
            }
        }
        if let maxArguments, parsed.arguments.count > maxArguments {
            throw error("unexpected argument '\(VisibleText.of(parsed.arguments[maxArguments]))'", withUsage: true)
        }
        return parsed
    }

    /// Suggests only long options: every short one is a single edit from any other.
    func unknownOption(_ spelling: String) -> CommandUsageError {
        let long = options.flatMap(\.spellings).filter { $0.hasPrefix("--") } + ["--help"]
        return .unknownOption(spelling, known: long, command: command, usage: usage)
    }

    func error(_ problem: String, withUsage: Bool = false) -> CommandUsageError {
        CommandUsageError(command: command, problem: problem, usage: withUsage ? usage : nil)
    }

    /// The candidate at most two edits away from `word` (the closest, the first of equals), or
    /// nil: the "Did you mean" of unknown options and commands.
    public static func nearest(to word: String, among candidates: [String]) -> String? {
        let best = candidates.min { editDistance($0, word) < editDistance($1, word) }
        return best.flatMap { editDistance($0, word) <= 2 ? $0 : nil }
    }

    /// Levenshtein distance in Characters: insertions, deletions and substitutions.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var diagonal = row[0]
            row[0] = i
            for j in 1...b.count {
                let above = row[j]
                row[j] = min(above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }
}

/// What `CommandArguments.parse` read: the options in the order given, and the positional
/// arguments.
public struct ParsedArguments: Sendable {
    /// One option as given: `option` is its declared name, `spelled` what the user typed.
    public struct Occurrence: Sendable, Equatable {
        public let option: String
        public let spelled: String
        /// nil for a flag.
        public let value: String?
    }

    /// The command the arguments belong to (for the errors of `integer`).
    public let command: String
    /// The options given, in order, repeated ones each time.
    public internal(set) var occurrences: [Occurrence] = []
    /// The positional arguments, in order.
    public internal(set) var arguments: [String] = []
    /// `--help` or `-h` was given (and the command declares neither).
    public internal(set) var help = false

    init(command: String) { self.command = command }

    /// Whether option `name` was given at least once.
    public func has(_ name: String) -> Bool { occurrences.contains { $0.option == name } }

    /// The value option `name` was last given.
    public func value(_ name: String) -> String? { occurrences.last { $0.option == name }?.value }

    /// Every value of a repeated option, in order.
    public func values(_ name: String) -> [String] {
        occurrences.compactMap { $0.option == name ? $0.value : nil }
    }

    /// The last value of option `name` as a whole number in `range` (BoundedNumber), named as
    /// the user spelled the option; nil when it was not given. Every value given is checked,
    /// so an earlier one out of range is refused too.
    public func integer(_ name: String, in range: ClosedRange<Int>, unit: String? = nil) throws(CommandUsageError) -> Int? {
        var last: Int? = nil
        for given in occurrences where given.option == name {
            do {
                last = try BoundedNumber.integer(given.value ?? "", name: given.spelled, in: range, unit: unit)
            } catch {
                throw CommandUsageError(command: command, problem: error.description, usage: nil)
            }
        }
        return last
    }
}

/// A command line the command cannot run: `<command>: <problem>`, and for some problems the
/// command's usage on the lines after.
public struct CommandUsageError: Error, Equatable, CustomStringConvertible {
    /// The status a command returns for a usage error.
    public static let exitStatus: Int32 = 2

    /// `termhost forward add`.
    public let command: String
    /// `option '--name' needs a value`: what is wrong, with the user's text made visible.
    public let problem: String
    public let usage: String?

    public init(command: String, problem: String, usage: String? = nil) {
        self.command = command
        self.problem = problem
        self.usage = usage
    }

    public var description: String { "\(command): \(problem)" + (usage.map { "\n" + $0 } ?? "") }

    /// "unknown option '--jsn'. Did you mean '--json'?", suggesting the nearest of `known`
    /// (`CommandArguments.nearest`), for a command that reads its options itself.
    public static func unknownOption(_ spelling: String, known: [String], command: String,
                                     usage: String? = nil) -> CommandUsageError {
        let hint = CommandArguments.nearest(to: spelling, among: known).map { ". Did you mean '\($0)'?" } ?? ""
        return CommandUsageError(command: command, problem: "unknown option '\(VisibleText.of(spelling))'\(hint)", usage: usage)
    }
}
