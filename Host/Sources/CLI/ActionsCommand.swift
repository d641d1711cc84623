import CTermhost
import Foundation
import Glibc
import TermhostRegistry
import TermhostRuntime
import TermhostSDK

/// `termhost actions`: the typed actions the enabled features declare (from manifests: no plugin
/// code runs), and `termhost call FEATURE/ACTION ARG...`, which converts the words to the
/// declared types and calls the function through libffi.
enum ActionsCommand {
    static let usage = """
    usage: termhost actions [--json]
    Lists the typed actions the enabled features declare, read from the plugins' manifests.
    """

    static let callUsage = """
    usage: termhost call FEATURE/ACTION [ARG...]
           termhost call --json FEATURE/ACTION ['{"PARAM": VALUE, ...}']
    Calls one typed action. Words are converted to the declared types in order: bool true|false,
    integers in decimal, double, string (UTF-8), bytes (base64), json (JSON text). With --json the
    arguments are one JSON object (default {}) and the result is printed as JSON.
    Exit status: 0 it ran, 1 it failed, 2 unknown action or arguments it refuses (not called).
    """

    static func list(_ args: [String], _ g: GlobalOptions) -> Int32 {
        guard args.isEmpty else {
            Output.err("termhost actions: unexpected argument '\(VisibleText.of(args[0]))'\n\(usage)")
            return ExitCode.usage
        }
        var inspection = Inspection.run(g.runtimeOptions(), probe: false)
        inspection.closeDescriptors()
        let actions = DeclaredAction.all(inspection.resolution)
        if g.json {
            Output.out("[" + actions.map(json).joined(separator: ",") + "]")
            return ExitCode.success
        }
        if actions.isEmpty {
            Output.out("No actions: no enabled feature declares one (see 'termhost features').")
            return ExitCode.success
        }
        Output.table([["ACTION", "ACCESS", "THREAD", "SIGNATURE", "SUMMARY"]] + actions.map { d in
            [d.path, d.action.readOnly ? "read-only" : "state-changing", d.action.thread == .main ? "main" : "any",
             "(" + d.action.params.map { "\($0.name): \($0.type.rawValue)" }.joined(separator: ", ") + ") -> \(d.action.result.rawValue)",
             VisibleText.of(d.action.summary)]
        }, indent: "")
        return ExitCode.success
    }

    static func json(_ d: DeclaredAction) -> String {
        let q = JSONText.quoted, a = d.action
        let params = a.params.map { "{\"name\":\(q($0.name)),\"type\":\(q($0.type.rawValue)),\"description\":\(q($0.description))}" }
        return "{\"action\":\(q(d.path)),\"feature\":\(q(d.feature.rawValue)),\"name\":\(q(a.name)),\"summary\":\(q(a.summary)),"
            + "\"symbol\":\(q(a.symbol)),\"params\":[\(params.joined(separator: ","))],\"result\":\(q(a.result.rawValue)),"
            + "\"read_only\":\(a.readOnly),\"thread\":\(q(a.thread.rawValue)),\"takes_error\":\(a.takesError)}"
    }

    static func call(_ args: [String], _ g: GlobalOptions) -> Int32 {
        guard let path = args.first else {
            Output.err("termhost call: expected FEATURE/ACTION\n\(callUsage)")
            return ExitCode.usage
        }
        if g.json && args.count > 2 {
            Output.err("termhost call: with --json the arguments are one JSON object\n\(callUsage)")
            return ExitCode.usage
        }
        // The words as the kernel passed them: CommandLine.arguments has already replaced bytes
        // that are not UTF-8, and a string parameter must refuse those, not receive U+FFFD.
        let words = rawWords(count: args.count - 1)
        let runtime: HostRuntime
        do { runtime = try HostRuntime.start(g.runtimeOptions()) } catch {
            Output.err(error.description)
            return ExitCode.refusedToStart
        }
        defer { for message in runtime.shutdownProblems(runtime.shutdown()) { Output.err(message) } }
        let outcome = g.json ? runtime.callAction(path, json: words.first ?? Array("{}".utf8)) : runtime.callAction(path, words: words)
        switch outcome {
        case .success(let value):
            Output.out(g.json ? "{\"action\":\(JSONText.quoted(path)),\"ok\":true,\"result\":\(ActionOutput.json(value))}" : ActionOutput.plain(value))
            return ExitCode.success
        case .failure(let failure):
            var message = failure.message
            if failure.code == Int32(TERMHOST_ERR_NOT_FOUND) {
                let known = DeclaredAction.all(runtime.resolution).map(\.path)
                if let best = known.min(by: { UsageError.distance($0, path) < UsageError.distance($1, path) }),
                   UsageError.distance(best, path) <= 2 { message += ". Did you mean '\(best)'?" }
            }
            if g.json {
                Output.out("{\"action\":\(JSONText.quoted(path)),\"ok\":false,\"code\":\(JSONText.quoted(ToolsCommand.codeName(failure.code))),"
                           + "\"error\":\(JSONText.quoted(message))}")
            } else {
                Output.err("termhost call: \(message)")
            }
            let usage = !failure.called && (failure.code == Int32(TERMHOST_ERR_INVALID_ARGUMENT) || failure.code == Int32(TERMHOST_ERR_NOT_FOUND))
            return usage ? ExitCode.usage : ExitCode.failure
        }
    }

    /// The last `count` arguments of the process as bytes, host options among them left out
    /// the way GlobalOptions.hostOptions leaves them out.
    static func rawWords(count: Int) -> [[UInt8]] {
        let argv = (0..<Int(CommandLine.argc)).map { i in
            CommandLine.unsafeArgv[i].map { Array(UnsafeBufferPointer(start: UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self), count: strlen($0))) } ?? []
        }
        guard let at = argv.firstIndex(of: Array("call".utf8)) else { return [] }
        var words: [[UInt8]] = []
        var rest = argv[(at + 1)...]
        var afterDashes = false
        while let w = rest.popFirst() {
            if !afterDashes {
                if w == Array("--".utf8) { afterDashes = true; continue }
                let text = String(decoding: w, as: UTF8.self)
                let spelling = text.hasPrefix("--") ? String(text.prefix { $0 != "=" }) : text
                if let option = GlobalOptions.arguments.option(spelling) {
                    if option.takesValue, spelling == text { _ = rest.popFirst() }
                    continue
                }
                if text == "--help" || text == "-h" { continue }
            }
            words.append(w)
        }
        return Array(words.dropFirst().suffix(count))
    }
}

/// How `termhost call` prints a result: plain text (strings with control characters visible,
/// bytes in base64, JSON re-encoded so that no terminal control survives), or a JSON value.
enum ActionOutput {
    static func plain(_ v: ActionValue?) -> String {
        guard let v else { return "" }
        switch v {
        case .string(let s): return VisibleText.of(bytes: s)
        case .json(let j): return String(decoding: j, as: UTF8.self)
        default: return json(v)
        }
    }

    /// A void action's result is null; any other value as the tool catalog writes it.
    static func json(_ v: ActionValue?) -> String { v?.jsonText ?? "null" }
}
