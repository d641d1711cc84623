import TermhostRegistry
import TermhostRuntime

enum HelpText {
    static let builtIn: [(String, String)] = [
        ("plugins", "list, inspect and check plugins (no plugin code runs for list and info)"),
        ("features", "every feature in start order, with its state and the reason"),
        ("doctor", "what loaded, what did not and why, load times, quarantines, policy in force"),
        ("tools", "tools the features offer to the assistant and MCP clients; 'tools call' runs one"),
        ("actions", "typed actions the features declare (exported C functions)"),
        ("call", "call one typed action: termhost call FEATURE/ACTION ARG..."),
        ("settings", "your settings that sync to your other devices: list, set, unset"),
        ("daemon", "the long-lived host persistent sessions live in: run, status, stop"),
        ("sessions", "persistent terminal sessions in the daemon: list, events, kill"),
        ("attach", "join a persistent session from this terminal (~d detaches)"),
        ("version", "print the version"),
        ("help", "this help; 'termhost help <command>' for one command"),
    ]

    /// Built-in commands plus the commands of enabled features (read from manifests, so no
    /// plugin code runs to print help).
    static func general(_ resolution: Resolution) -> String {
        var lines = ["usage: termhost [--json] [--safe-mode] [--non-interactive] [--log-level LEVEL] <command> [args]", "",
                     "Commands:"]
        let width = (builtIn.map(\.0.count) + resolution.commandOwners.keys.map(\.count)).max() ?? 10
        for (name, summary) in builtIn { lines.append("  \(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(summary)") }
        let plugin = resolution.enabled.flatMap { f in f.descriptor.commands.filter { resolution.commandOwners[$0.name] == f.descriptor.id }
            .map { ($0.name, $0.summary, f.descriptor.id.rawValue) } }.sorted { $0.0 < $1.0 }
        if !plugin.isEmpty {
            lines += ["", "Commands from plugins:"]
            for (name, summary, id) in plugin {
                lines.append("  \(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(summary) [\(id)]")
            }
        }
        lines += ["", "Options:",
                  "  --json             machine-readable output for listings",
                  "  --safe-mode        load only the plugins of an installed plugin set",
                  "  --non-interactive  never prompt; anything that needs an answer fails",
                  "  --in-process       run a plugin's command here even when a daemon runs",
                  "  --no-autostart     fail instead of starting the daemon for a command that needs it",
                  "  --log-level LEVEL  debug, info, warning (default) or error, on stderr",
                  "", "Exit status: 0 success, 1 failure, 2 usage error, 3 refused to start, 128+N ended by signal N.",
                  "See Docs/Operators.md."]
        return lines.joined(separator: "\n")
    }
}
