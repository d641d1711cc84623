import AssistantCore
import Foundation
import Synchronization
import TermhostSDK

/// The Asks waiting in the daemon for an answer from any client: a background run's calls that
/// need a yes. Each waits until `termhost approvals allow|deny ID` answers it, its run stops,
/// or the policy's approvalTimeout passes (then it is refused). Held in memory: an Ask lives
/// no longer than its run, which lives no longer than the daemon.
final class PendingApprovals: Sendable {
    static let shared = PendingApprovals()

    struct Pending: Sendable {
        let id: Int
        let runID: String
        let conversation: String
        let request: ApprovalRequest
        let asked: Date
        let deadline: Date
    }

    private struct Waiting: Sendable {
        let pending: Pending
        let answered: DispatchSemaphore
        var verdict: ApprovalVerdict?
    }
    private let state = Mutex<(next: Int, waiting: [Int: Waiting])>((1, [:]))

    /// The Asks waiting now, oldest first.
    var all: [Pending] { state.withLock { $0.waiting.values.map(\.pending).sorted { $0.id < $1.id } } }

    /// Registers `request`, tells `registered` (the notification hook), and waits for the
    /// answer; a deny when `seconds` pass or `isStopped` turns true first.
    func wait(_ request: ApprovalRequest, runID: String, conversation: String, seconds: Int, isStopped: () -> Bool,
              registered: (Pending) -> Void) -> ApprovalVerdict {
        let answered = DispatchSemaphore(value: 0)
        let pending = state.withLock { s -> Pending in
            let p = Pending(id: s.next, runID: runID, conversation: conversation, request: request, asked: Date(),
                            deadline: Date().addingTimeInterval(Double(seconds)))
            s.next += 1
            s.waiting[p.id] = Waiting(pending: p, answered: answered)
            return p
        }
        registered(pending)
        var verdict: ApprovalVerdict?
        while verdict == nil {
            // In slices, so a stopped run ends its wait within a tenth of a second.
            if answered.wait(timeout: .now() + 0.1) == .success || isStopped() || Date() >= pending.deadline {
                verdict = state.withLock { s in
                    let v = s.waiting[pending.id]?.verdict
                    s.waiting[pending.id] = nil
                    return v
                } ?? (isStopped() ? ApprovalVerdict(answer: .deny, who: "the run was stopped while it waited for an answer", timedOut: true)
                      : ApprovalVerdict(answer: .deny, who: "nobody answered within \(seconds) s (assistant.approvalTimeout)", timedOut: true))
            }
        }
        return verdict!
    }

    /// Answers Ask `id`; throws when there is none (answered already, timed out, or never was)
    /// or when `always` is not offered for it (the same choices as the terminal's prompt).
    func answer(_ id: Int, _ answer: ApprovalAnswer, who: String) throws(PluginError) {
        try state.withLock { s throws(PluginError) in
            guard var waiting = s.waiting[id], waiting.verdict == nil else {
                throw PluginError("no approval \(id) is waiting (answered already, timed out, or never asked; termhost approvals lists them)")
            }
            if answer == .always && waiting.pending.request.family == nil {
                throw PluginError("'always' is not offered for approval \(id): the policy does not remember approvals, or the call is given a secret; allow it once or deny it")
            }
            waiting.verdict = ApprovalVerdict(answer: answer, who: who)
            s.waiting[id] = waiting
            waiting.answered.signal()
        }
    }
}

/// An Ask of a background run: waits in the daemon for whoever answers first.
struct DaemonPrompter: ApprovalPrompter {
    let runID: String
    let conversation: String
    let seconds: Int
    let control: RunControl
    let notifier: ApprovalNotifier

    func ask(_ request: ApprovalRequest) -> ApprovalAnswer { decide(request).answer }

    func decide(_ request: ApprovalRequest) -> ApprovalVerdict {
        let events = ApprovalEvents(host: notifier.host)
        var asked: PendingApprovals.Pending?
        let verdict = PendingApprovals.shared.wait(request, runID: runID, conversation: conversation, seconds: seconds,
                                                   isStopped: { control.isStopped }) { pending in
            asked = pending
            events.pending(pending)
            notifier.notify(pending)
        }
        if let asked { events.decided(asked, verdict) }
        return verdict
    }
}
