import AssistantCore
import Foundation
import TermhostSDK

/// Asks waiting in the daemon, told to other features through the events service: the SSH
/// plugin shows them in the events of the sessions to the same host (`termhost sessions
/// events`), and any front end may follow them. A payload names the Ask's id (what `termhost
/// approvals allow ID` takes), its tool, host and run, never the command or the arguments:
/// those stay with `termhost approvals`, as with the notification hook.
///
///   org.termhost.assistant.approval.pending  {"id":3,"tool":"ssh_exec","host":"prod","run":"r1","expiresAt":T}
///   org.termhost.assistant.approval.decided  {"id":3,"tool":"ssh_exec","host":"prod","run":"r1","decision":"allowed"}
/// decision is "allowed", "denied" or "expired" (nobody answered in time, or the run stopped).
struct ApprovalEvents: Sendable {
    static let pendingTopic = "org.termhost.assistant.approval.pending"
    static let decidedTopic = "org.termhost.assistant.approval.decided"
    let host: PluginHost

    func pending(_ p: PendingApprovals.Pending) {
        publish(Self.pendingTopic, p, extra: "\"expiresAt\":\(p.deadline.timeIntervalSince1970)")
    }

    func decided(_ p: PendingApprovals.Pending, _ verdict: ApprovalVerdict) {
        let decision = verdict.timedOut ? "expired" : verdict.answer == .deny ? "denied" : "allowed"
        publish(Self.decidedTopic, p, extra: "\"decision\":\"\(decision)\"")
    }

    private func publish(_ topic: String, _ p: PendingApprovals.Pending, extra: String) {
        let json = "{\"id\":\(p.id),\"tool\":\(JSONText.quoted(p.request.tool)),\"host\":\(p.request.host.map(JSONText.quoted) ?? "null"),"
            + "\"run\":\(JSONText.quoted(p.runID)),\(extra)}"
        // Nobody listening, or no events service: the Ask waits all the same.
        try? host.events?.publish(topic, json: json)
    }
}
