import CTermhost
import Foundation
import Glibc
import TermhostRegistry
import TermhostRuntime
import TermhostSDK

/// `termhost tools`: the catalog of tools the enabled features offer (from manifests: no plugin
/// code runs), and `termhost tools call NAME [JSON]`, which runs one tool for the person at the
/// terminal, as a command would: no model and no policy, the host's schema check still applies.
enum ToolsCommand {
    static let usage = """
    usage: termhost tools [--json]
           termhost tools call NAME [ARGUMENTS-JSON]
    Lists the tools the enabled features offer to the assistant and to MCP clients, read from the
    plugins' manifests; `call` runs one now with a JSON object of arguments (default {}) and prints
    its result. Exit status: 0 the tool ran, 1 it failed, 2 unknown tool or arguments it refuses.
    """

    static func run(_ args: [String], _ g: GlobalOptions) -> Int32 {
        switch args.first {
        case nil: return list(g)
        case "call":
            guard args.count == 2 || args.count == 3 else {
                Output.err("termhost tools call: expected NAME and at most one ARGUMENTS-JSON\n\(usage)")
                return ExitCode.usage
            }
            return call(args[1], arguments: args.count == 3 ? args[2] : "{}", g)
        case let other?:
            Output.err("termhost tools: unknown subcommand '\(VisibleText.of(other))'\n\(usage)")
            return ExitCode.usage
        }
    }

    static func list(_ g: GlobalOptions) -> Int32 {
        var inspection = Inspection.run(g.runtimeOptions(), probe: false)
        inspection.closeDescriptors()
        let resolution = inspection.resolution
        if g.json { Output.out(ToolService.catalogJSON(resolution)); return ExitCode.success }
        // The features' own tools and their typed actions, as `--json` lists them: one table.
        let rows = resolution.tools.map { t, feature in
            [t.name, feature.rawValue, t.readOnly ? "read-only" : "state-changing", t.parallelSafe ? "yes" : "no",
             t.modes.map(\.rawValue).joined(separator: ","), oneLine(t.description)]
        } + DeclaredAction.tools(resolution).map { a in
            [a.toolName, a.feature.rawValue, a.action.readOnly ? "read-only" : "state-changing", "no", "planning,acting",
             oneLine(a.action.summary + " (typed action \(a.path))")]
        }
        if rows.isEmpty {
            Output.out("No tools: no enabled feature offers one (see 'termhost features').")
        } else {
            Output.table([["TOOL", "FEATURE", "ACCESS", "PARALLEL", "MODES", "DESCRIPTION"]] + rows.sorted { $0[0] < $1[0] }, indent: "")
        }
        for p in resolution.problems {
            switch p {
            case .toolRefused, .duplicateTool: Output.out("warning: \(p)")
            default: break
            }
        }
        return ExitCode.success
    }

    /// The description's first line, at most 72 characters, control characters made visible.
    static func oneLine(_ text: String) -> String {
        let first = VisibleText.of(String(text.prefix { $0 != "\n" }))
        return first.count > 72 ? String(first.prefix(71)) + "…" : first
    }

    static func call(_ name: String, arguments: String, _ g: GlobalOptions) -> Int32 {
        let runtime: HostRuntime
        do { runtime = try HostRuntime.start(g.runtimeOptions()) } catch {
            Output.err(error.description)
            return ExitCode.refusedToStart
        }
        guard let tools = runtime.services.tools else { return ExitCode.failure }
        let hasTerminal = !g.nonInteractive && isatty(0) == 1 && isatty(2) == 1
        let scene = runtime.attachScene(terminal: hasTerminal ? .init(input: 0, output: 2) : nil)
        // The policy's Deny holds here too; every call, run or refused, is announced for the
        // audit log (the Assistant writes it, `by: cli`).
        let paths = runtime.options.paths
        let denied = ToolDenyRules.refusal(tool: name, operatorPolicy: paths.operatorPolicy, userConfig: paths.userConfig)
        func announce(_ outcome: String, _ reason: String) {
            runtime.services.events.publish(ToolsCommand.cliCallEvent,
                "{\"tool\":\(JSONText.quoted(name)),\"arguments\":\(JSONText.quoted(arguments)),\"outcome\":\"\(outcome)\",\"reason\":\(JSONText.quoted(reason))}")
        }
        if let denied {
            announce("refused", denied)
            Output.err("termhost tools call: refused: \(denied)")
            scene.detach()
            runtime.shutdown()
            return ExitCode.failure
        }
        announce("approved", "run from the command line by the person at it")
        let signals = SignalMapping(runtime: runtime, scene: scene)
        let outcome = tools.call(tool: name, argumentsJSON: arguments, callID: tools.nextCallID(), scene: scene.id)
        if let sig = signals.terminatingSignal {
            // As for a command (main.swift): the signal's thread shuts down and exits.
            sleep(UInt32(2 * runtime.options.shutdownBound) + 2)
            _exit(ExitCode.signal(sig))
        }
        withExtendedLifetime(signals) {}
        let status: Int32
        switch outcome {
        case .success(let result):
            Output.out(g.json ? "{\"tool\":\(JSONText.quoted(name)),\"ok\":true,\"result\":\(result)}" : result)
            status = ExitCode.success
        case .failure(let failure):
            let usage = failure.code == Int32(TERMHOST_ERR_INVALID_ARGUMENT) || failure.code == Int32(TERMHOST_ERR_NOT_FOUND)
            var message = failure.message
            if failure.code == Int32(TERMHOST_ERR_NOT_FOUND), runtime.resolution.toolOwners[name] == nil,
               let best = runtime.resolution.toolOwners.keys.min(by: { UsageError.distance($0, name) < UsageError.distance($1, name) }),
               UsageError.distance(best, name) <= 2 {
                message += ". Did you mean '\(best)'?"
            }
            if g.json {
                Output.out("{\"tool\":\(JSONText.quoted(name)),\"ok\":false,\"code\":\(JSONText.quoted(codeName(failure.code))),"
                           + "\"error\":\(JSONText.quoted(message))}")
            } else {
                Output.err("termhost tools call: \(message)")
            }
            status = usage ? ExitCode.usage : ExitCode.failure
        }
        scene.detach()
        for message in runtime.shutdownProblems(runtime.shutdown()) { Output.err(message) }
        return status
    }

    /// Published (services/events.h) for every `tools call`, before the tool runs or when it is
    /// refused: {"tool", "arguments", "outcome": "approved"|"refused", "reason"}.
    static let cliCallEvent = "termhost.tools.cli-call"

    /// TERMHOST_ERR_* without the prefix, for `--json`.
    static func codeName(_ code: Int32) -> String {
        switch Int(code) {
        case TERMHOST_ERR_INVALID_ARGUMENT: "INVALID_ARGUMENT"
        case TERMHOST_ERR_NOT_FOUND: "NOT_FOUND"
        case TERMHOST_ERR_UNSUPPORTED: "UNSUPPORTED"
        case TERMHOST_ERR_DENIED: "DENIED"
        case TERMHOST_ERR_IO: "IO"
        case TERMHOST_ERR_BUSY: "BUSY"
        case TERMHOST_ERR_CANCELLED: "CANCELLED"
        case TERMHOST_ERR_TIMEOUT: "TIMEOUT"
        case TERMHOST_ERR_NON_INTERACTIVE: "NON_INTERACTIVE"
        case TERMHOST_ERR_TOO_LARGE: "TOO_LARGE"
        default: "INTERNAL"
        }
    }
}
