import TermhostRuntime
import TermhostServices

/// Options accepted before the command: `termhost [options] <command> [args]`.
struct GlobalOptions {
    var json = false
    var safeMode = false
    var nonInteractive = false
    var logLevel: LogSink.Level = .warning
    var help = false

    /// Consumes leading options (and --json anywhere); returns the remaining arguments.
    static func parse(_ args: [String]) throws(UsageError) -> (GlobalOptions, [String]) {
        var o = GlobalOptions()
        var rest: [String] = []
        var i = 0
        var commandSeen = false
        while i < args.count {
            let a = args[i]
            switch a {
            case "--json": o.json = true
            case "--safe-mode" where !commandSeen: o.safeMode = true
            case "--non-interactive" where !commandSeen: o.nonInteractive = true
            case "--help", "-h": o.help = true
            case "--log-level" where !commandSeen:
                i += 1
                guard i < args.count, let level = LogSink.Level(name: args[i]) else {
                    throw UsageError("--log-level needs one of: debug, info, warning, error")
                }
                o.logLevel = level
            case "--":
                rest += args[(i + 1)...]
                i = args.count
                continue
            default:
                if a.hasPrefix("--") && !commandSeen { throw UsageError.unknownOption(a, known: GlobalOptions.names) }
                commandSeen = true
                rest.append(a)
            }
            i += 1
        }
        return (o, rest)
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
