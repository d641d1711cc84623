import TermhostSDK

/// Puts the assistant's Asks that wait in the daemon into the events of the persistent
/// sessions to the same saved host (ssh/sessions.h: "approval", "approval-decided"), so a
/// client following a session (`termhost sessions events`, a web page's glance list) sees that
/// the assistant waits for a yes on that host, and with which id to answer it. Only tool, host,
/// run and id travel: the command itself stays with `termhost approvals`.
final class ApprovalWatch: Sendable {
    private let subscriptions: [Events.Subscription]

    init(host: PluginHost, sessions: SessionsProvider) {
        subscriptions = [ApprovalNotice.pendingTopic, ApprovalNotice.decidedTopic].compactMap { topic in
            try? host.events?.subscribe(topic) { [weak sessions] topic, json in
                guard let notice = ApprovalNotice.parse(topic: topic, json) else {
                    host.log(.warning, "ssh: an approval event on \(topic) is out of shape; ignored")
                    return
                }
                sessions?.note(notice)
            }
        }
    }

    func cancel() { subscriptions.forEach { $0.cancel() } }
}
