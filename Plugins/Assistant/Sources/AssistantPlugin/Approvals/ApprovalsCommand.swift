import AssistantCore
import Foundation
import Glibc
import TermhostSDK

/// `termhost approvals`: the Asks of background runs waiting in the daemon, and the answer to
/// one from this terminal, with the choices the terminal's own prompt offers. (Remembered
/// approvals, "yes, always", are `termhost assistant approvals`.)
struct ApprovalsCommand {
    static let usage = """
        termhost approvals [--json]              Asks of background runs (ask --background) waiting in the daemon
        termhost approvals allow ID [--always]   run the call (--always: and remember its command family on its host)
        termhost approvals deny ID               refuse it
        """
    static let arguments = CommandArguments("termhost approvals", usage: "usage: " + usage,
                                            options: [.flag("--json"), .flag("--always")], maxArguments: 2)

    let host: PluginHost
    let invocation: CommandInvocation

    func run() -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try invocation.parse(with: Self.arguments) } catch { return error.status }
        // Asks live in the daemon's memory: elsewhere there are none to see or answer.
        guard host.isDaemon else {
            if parsed.arguments.isEmpty {
                invocation.print(invocation.jsonOutput || parsed.has("--json") ? "[]" : "no approvals are waiting (no daemon runs)")
                return 0
            }
            invocation.printError("termhost approvals: no daemon runs, so no approval is waiting")
            return 1
        }
        guard let verb = parsed.arguments.first else { return list(json: invocation.jsonOutput || parsed.has("--json")) }
        guard verb == "allow" || verb == "deny" else {
            return invocation.reportUsageError(CommandUsageError(command: "termhost approvals", problem: "unknown action '\(VisibleText.of(verb))' (allow or deny)", usage: "usage: " + Self.usage))
        }
        guard parsed.arguments.count == 2, let id = Int(parsed.arguments[1]), id > 0 else {
            return invocation.reportUsageError(CommandUsageError(command: "termhost approvals", problem: "\(verb) needs the ID termhost approvals lists", usage: "usage: " + Self.usage))
        }
        if verb == "deny" && parsed.has("--always") {
            return invocation.reportUsageError(CommandUsageError(command: "termhost approvals", problem: "--always goes with allow", usage: "usage: " + Self.usage))
        }
        let answer: ApprovalAnswer = verb == "deny" ? .deny : parsed.has("--always") ? .always : .once
        do throws(PluginError) {
            try PendingApprovals.shared.answer(id, answer, who: who(verb, id))
        } catch {
            invocation.printError("termhost approvals: \(error.message)")
            return 1
        }
        invocation.print(answer == .deny ? "approval \(id): denied" : "approval \(id): allowed\(answer == .always ? " (and remembered)" : "")")
        return 0
    }

    /// Who answered, for the audit log: the command, the client's user and terminal.
    private func who(_ verb: String, _ id: Int) -> String {
        var parts: [String] = []
        if let user = host.variable("USER", scene: invocation.scene) { parts.append("user \(VisibleText.of(user))") }
        if let tty = ttyname(invocation.stdinFD) { parts.append(String(cString: tty)) }
        return "'termhost approvals \(verb) \(id)'" + (parts.isEmpty ? "" : " (\(parts.joined(separator: ", ")))")
    }

    private func list(json: Bool) -> Int32 {
        let all = PendingApprovals.shared.all
        if json {
            invocation.print("[" + all.map(Self.json).joined(separator: ",") + "]")
            return 0
        }
        if all.isEmpty { invocation.print("no approvals are waiting") }
        for p in all {
            let left = max(0, Int(p.deadline.timeIntervalSinceNow.rounded(.up)))
            // The request's own lines, as the terminal's prompt shows them: control characters visible.
            invocation.print("approval \(p.id) (run \(VisibleText.of(p.runID)), conversation \(VisibleText.of(p.conversation)), refused in \(left) s if unanswered):")
            invocation.print(p.request.text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n"))
            let always = p.request.family.map { " | allow \(p.id) --always (for '\(VisibleText.of($0))' on \(VisibleText.of(p.request.host ?? "any host")))" } ?? ""
            invocation.print("  answer: termhost approvals allow \(p.id)\(always) | deny \(p.id)")
        }
        return 0
    }

    static func json(_ p: PendingApprovals.Pending) -> String {
        let r = p.request
        var fields = ["\"id\":\(p.id)", "\"run\":\(JSONText.quoted(p.runID))", "\"conversation\":\(JSONText.quoted(p.conversation))",
                      "\"tool\":\(JSONText.quoted(r.tool))", "\"arguments\":\(JSONText.quoted(r.argumentsJSON))",
                      "\"reason\":\(JSONText.quoted(r.reason))", "\"asked\":\(Int(p.asked.timeIntervalSince1970))",
                      "\"expiresIn\":\(max(0, Int(p.deadline.timeIntervalSinceNow.rounded(.up))))",
                      "\"always\":\(r.family != nil)"]
        if let host = r.host { fields.append("\"host\":\(JSONText.quoted(host))") }
        if let command = r.command { fields.append("\"command\":\(JSONText.quoted(command))") }
        if let family = r.family { fields.append("\"family\":\(JSONText.quoted(family))") }
        return "{" + fields.joined(separator: ",") + "}"
    }
}
