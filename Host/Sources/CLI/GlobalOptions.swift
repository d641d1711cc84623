import TermhostRuntime
import TermhostSDK
import TermhostServices

/// Options accepted before the command: `termhost [options] <command> [args]`.
struct GlobalOptions {
    var json = false
    var safeMode = false
    var nonInteractive = false
    var logLevel: LogSink.Level = .warning
    var help = false
    /// Run a plugin's command in this process even when a daemon runs (`--in-process`).
    var inProcess = false
    /// A command that needs the daemon fails, saying how to start one, instead of starting it
    /// (`--no-autostart`).
    var noAutostart = false

    /// Consumes the options before the command name; returns the command name and every
    /// argument after it exactly as typed. A plugin command's arguments are the plugin's:
    /// taking `--json` out of them wherever it appeared turned `termhost note add remember the
    /// --json flag` into a note without "--json", and `--help` in a message printed usage
    /// instead. The plugin still learns that `termhost --json CMD` asked for JSON through the
    /// invocation's json_output. The host's own commands (`plugins`, `doctor`...) run no plugin
    /// code, so their arguments may still carry host options (`termhost doctor --json`).
    static func parse(_ args: [String]) throws(UsageError) -> (GlobalOptions, [String]) {
        var o = GlobalOptions()
        let leading = try o.take(args)
        guard let command = leading.arguments.first else { return (o, []) }
        var rest = Array(leading.arguments.dropFirst())
        if GlobalOptions.hostCommands.contains(command) {
            var options: [String] = []
            (options, rest) = hostOptions(in: rest)
            _ = try o.take(options)
        }
        return (o, [command] + rest)
    }

    /// Commands the host runs itself: their arguments never reach a plugin.
    static let hostCommands: Set<String> = HostRuntime.builtInCommands

    /// The host's options; `--help` and `-h` are the parser's own. Options end at the command.
    static let arguments = CommandArguments("termhost", options: [
        .flag("--json"), .flag("--safe-mode"), .flag("--non-interactive"), .flag("--in-process"), .flag("--no-autostart"), .value("--log-level"),
    ], optionsEndAtFirstArgument: true)

    /// Splits a host command's arguments into the host options among them (with their values)
    /// and the rest, in order; everything after `--` is the rest.
    static func hostOptions(in args: [String]) -> (options: [String], rest: [String]) {
        var options: [String] = [], rest: [String] = []
        var remaining = args[...]
        while let a = remaining.popFirst() {
            if a == "--" { rest += remaining; break }
            let spelling = a.hasPrefix("--") ? String(a.prefix { $0 != "=" }) : a
            guard let option = arguments.option(spelling) else {
                if a == "--help" || a == "-h" { options.append(a) } else { rest.append(a) }
                continue
            }
            options.append(a)
            if option.takesValue, spelling == a, let value = remaining.popFirst() { options.append(value) }
        }
        return (options, rest)
    }

    /// Applies the options at the start of `args`; returns them parsed, the command and its
    /// arguments (as typed) in `arguments`.
    mutating func take(_ args: [String]) throws(UsageError) -> ParsedArguments {
        let parsed: ParsedArguments
        do { parsed = try GlobalOptions.arguments.parse(args) } catch { throw UsageError(error.problem) }
        json = json || parsed.has("--json")
        safeMode = safeMode || parsed.has("--safe-mode")
        nonInteractive = nonInteractive || parsed.has("--non-interactive")
        inProcess = inProcess || parsed.has("--in-process")
        noAutostart = noAutostart || parsed.has("--no-autostart")
        help = help || parsed.help
        for name in parsed.values("--log-level") {
            guard let level = LogSink.Level(name: name) else {
                throw UsageError("--log-level needs one of: debug, info, warning, error")
            }
            logLevel = level
        }
        return parsed
    }

    func runtimeOptions() -> RuntimeOptions {
        var r = RuntimeOptions()
        r.safeMode = safeMode
        r.nonInteractive = nonInteractive
        r.logLevel = logLevel
        return r
    }
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }

    /// "unknown option '--jsn'. Did you mean '--json'?" (the SDK's wording for every command).
    static func unknownOption(_ option: String, known: [String]) -> UsageError {
        UsageError(CommandUsageError.unknownOption(option, known: known, command: "termhost").problem)
    }

    static func distance(_ a: String, _ b: String) -> Int { CommandArguments.editDistance(a, b) }
}
