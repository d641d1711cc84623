import TermhostRuntime
import TermhostServices

/// Options accepted before the command: `termhost [options] <command> [args]`.
struct GlobalOptions {
    var json = false
    var safeMode = false
    var nonInteractive = false
    var logLevel: LogSink.Level = .warning
    var help = false

    /// Consumes the options before the command name; returns the command name and every
    /// argument after it exactly as typed. A plugin command's arguments are the plugin's:
    /// taking `--json` out of them wherever it appeared turned `termhost note add remember the
    /// --json flag` into a note without "--json", and `--help` in a message printed usage
    /// instead. The plugin still learns that `termhost --json CMD` asked for JSON through the
    /// invocation's json_output. The host's own commands (`plugins`, `doctor`...) run no plugin
    /// code, so their arguments may still carry host options (`termhost doctor --json`).
    static func parse(_ args: [String]) throws(UsageError) -> (GlobalOptions, [String]) {
        var o = GlobalOptions()
        var i = 0
        while i < args.count, args[i].hasPrefix("-") {
            let a = args[i]
            i += 1
            if a == "--" { break }
            try o.take(a, args, &i)
        }
        guard i < args.count else { return (o, []) }
        let command = args[i]
        var rest: [String] = []
        if GlobalOptions.hostCommands.contains(command) {
            i += 1
            while i < args.count {
                let a = args[i]
                i += 1
                if a == "--" { rest += args[i...]; break }
                if GlobalOptions.names.contains(a) || a == "-h" { try o.take(a, args, &i) } else { rest.append(a) }
            }
        } else {
            rest = Array(args[(i + 1)...])
        }
        return (o, [command] + rest)
    }

    /// Commands the host runs itself: their arguments never reach a plugin.
    static let hostCommands: Set<String> = HostRuntime.builtInCommands

    /// Applies option `a`; `i` points past it and moves past an option's value.
    mutating func take(_ a: String, _ args: [String], _ i: inout Int) throws(UsageError) {
        switch a {
        case "--json": json = true
        case "--safe-mode": safeMode = true
        case "--non-interactive": nonInteractive = true
        case "--help", "-h": help = true
        case "--log-level":
            guard i < args.count, let level = LogSink.Level(name: args[i]) else {
                throw UsageError("--log-level needs one of: debug, info, warning, error")
            }
            logLevel = level
            i += 1
        default:
            throw UsageError.unknownOption(a, known: GlobalOptions.names)
        }
    }

    static let names = ["--json", "--safe-mode", "--non-interactive", "--log-level", "--help"]

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

    /// "Unknown option '--jsn'. Did you mean '--json'?"
    static func unknownOption(_ option: String, known: [String]) -> UsageError {
        let best = known.min { distance($0, option) < distance($1, option) }
        if let best, distance(best, option) <= 2 {
            return UsageError("unknown option '\(option)'. Did you mean '\(best)'?")
        }
        return UsageError("unknown option '\(option)'")
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var prev = row[0]
            row[0] = i
            for j in 1...max(b.count, 1) where !b.isEmpty {
                let cur = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1))
                prev = cur
            }
        }
        return row[b.count]
    }
}
