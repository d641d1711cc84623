import AssistantCore
import AssistantProviders
import Foundation
import Glibc
import TermhostSDK

/// Tells the user an Ask waits in the daemon, as the setting `approvalNotify` says
/// (ApprovalHook), read when an Ask is registered. `url` gets an ntfy-style POST (the text as body; Title, Priority: high, Tags and Click
/// headers); `command` is run with the title and the text as its two arguments (so
/// notify-send works as it is) and TERMHOST_APPROVAL_* in its environment. The text names the
/// tool, the host and how to answer, never the command or the arguments unless `details` is
/// true, and never a secret: those are the vault's, and a call given one is never described.
struct ApprovalNotifier: Sendable {
    let host: PluginHost

    /// The title and the text of one Ask.
    static func message(_ p: PendingApprovals.Pending, details: Bool) -> (title: String, text: String) {
        let r = p.request
        var text = "The assistant (run \(VisibleText.of(p.runID))) wants to run \(VisibleText.of(r.tool))"
            + (r.host.map { " on host \(VisibleText.of($0))" } ?? "") + "."
        if details {
            text += r.command.map { "\ncommand: \(VisibleText.of($0))" } ?? "\narguments: \(VisibleText.of(r.argumentsJSON))"
        }
        let seconds = max(0, Int(p.deadline.timeIntervalSince(p.asked).rounded()))
        text += "\nAnswer with 'termhost approvals allow \(p.id)' or 'termhost approvals deny \(p.id)' within \(seconds) s."
        return ("Termhost: approval \(p.id) needed", text)
    }

    /// Sends the hook for a new Ask, on a thread of its own (the Ask's time runs meanwhile);
    /// what went wrong is logged, never in the Ask's way.
    func notify(_ pending: PendingApprovals.Pending) {
        let setting: String?, hook: ApprovalHook?
        do throws(PluginError) { setting = try host.setting(feature: "org.termhost.assistant", key: ApprovalHook.settingKey) } catch {
            host.log(.warning, "assistant: approval \(pending.id): no notification: \(error.message)")
            return
        }
        do throws(ApprovalHook.Invalid) { hook = try ApprovalHook.parse(setting) } catch {
            host.log(.warning, "assistant: approval \(pending.id): no notification: \(error.message)")
            return
        }
        guard let hook, hook.url != nil || hook.command != nil else { return }
        let host = self.host
        // A secret never appears either way: a call is given one by handle, never in its text.
        let (title, text) = Self.message(pending, details: hook.details)
        Thread.detachNewThread {
            if let url = hook.url {
                var headers = ["Title: \(title)", "Priority: high", "Tags: question", "Content-Type: text/plain; charset=utf-8"]
                if let click = hook.click { headers.append("Click: \(click)") }
                if let failure = NotificationPost.send(url: url, headers: headers, body: text) {
                    host.log(.warning, "assistant: approval \(pending.id): the notification to \(url) failed: \(VisibleText.of(failure))")
                }
            }
            if let command = hook.command {
                let environment = ["TERMHOST_APPROVAL_ID=\(pending.id)", "TERMHOST_APPROVAL_TOOL=\(pending.request.tool)",
                                   "TERMHOST_APPROVAL_HOST=\(pending.request.host ?? "")", "TERMHOST_APPROVAL_RUN=\(pending.runID)"]
                if let failure = HookCommand.run(command, [title, text], environment: environment, within: 30) {
                    host.log(.warning, "assistant: approval \(pending.id): the notification command \(VisibleText.of(command)) \(failure)")
                }
            }
        }
    }
}
