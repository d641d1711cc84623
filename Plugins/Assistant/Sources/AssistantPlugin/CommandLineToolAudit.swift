import AssistantCore
import Foundation
import TermhostSDK

/// `termhost tools call` runs a tool without the Assistant, for the person at the command line;
/// the host announces each call (`termhost.tools.cli-call`: run, or refused by the policy's
/// Deny) and this writes it to the same audit log as the gate's decisions, `by: cli`, so
/// `termhost assistant audit` shows every tool call made on this machine's behalf.
enum CommandLineToolAudit {
    static let topic = "termhost.tools.cli-call"

    static func subscribe(_ host: PluginHost) -> Events.Subscription? {
        guard let events = host.events, let store = host.store else { return nil }
        let audit = AuditLog(storage: StorePolicyStorage(store: store))
        return try? events.subscribe(topic) { _, json in
            guard let f = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any],
                  let tool = f["tool"] as? String, let arguments = f["arguments"] as? String else { return }
            let call = GateCall(runID: "cli", toolName: tool, toolReadOnly: false, argumentsJSON: arguments)
            let redactor = Redactor()
            let record = AuditLog.Record(time: Int64(Date().timeIntervalSince1970), run: "cli", tool: tool, host: call.host ?? "",
                                         command: redactor.redact(call.command ?? arguments),
                                         outcome: f["outcome"] as? String == "refused" ? .refused : .approved, by: .cli,
                                         reason: redactor.redact(f["reason"] as? String ?? ""))
            do { try audit.append(record) } catch { host.log(.error, "assistant: cannot audit a command-line tool call: \(error)") }
        }
    }
}
