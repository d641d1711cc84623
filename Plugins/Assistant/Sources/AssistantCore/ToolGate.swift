import Foundation
import Synchronization

/// The one place that decides whether a tool call runs: the run engine and the MCP server both
/// call it, so there is one execution path under one policy.
///
/// Design: boundaries first, then the policy's level, then who may answer an Ask.
///
/// 1. Boundaries, never lifted by any setting: a tool the catalog does not offer in this run's
///    mode is refused; a planning run refuses any call not read-only (an `ssh_exec` is
///    read-only only when the judge proves its command so). Schemas, host keys and credentials
///    are checked where the call runs and are not the gate's to relax.
/// 2. The level (`AssistantPolicy.rule`): Deny > Ask > Approve > the default by kind.
///    Deny refuses, whatever the run's full access or reviewer. Approve runs.
/// 3. An Ask is answered, in order, by: full access (when the run has it and the policy allows
///    it); a remembered "always" approval for the command family on this host; the reviewer
///    (when the run asked for it, the policy allows it, and the call is not proven read-only);
///    the person at the terminal. A reviewer's deny refuses. A reviewer that cannot decide
///    hands the call to the person, or refuses it when nobody is there. With no person, an Ask
///    is refused with a message that names the setting that would allow it.
///
/// Every decision is appended to the audit log before the gate returns.
///
/// Threading: `decide` may be called from any thread; the engine calls it once per call, in
/// the model's order, since it may block on a person.
public final class ToolGate: Sendable {
    public let policy: AssistantPolicy
    public let judge: any CommandJudge
    public let approvals: RememberedApprovals
    public let audit: AuditLog
    /// Second layer against secrets in what the audit log keeps.
    public let redactor: Redactor
    let now: @Sendable () -> Int64

    /// Three reviewer failures in a row and it is not asked again in this gate's life: a
    /// model that is down would otherwise be waited on for every call.
    static let reviewerFailureLimit = 3
    private let reviewerFailures = Mutex(0)

    public init(policy: AssistantPolicy, judge: any CommandJudge, storage: any PolicyStorage,
                redactor: Redactor = Redactor(),
                now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }) {
        self.policy = policy
        self.judge = judge
        self.approvals = RememberedApprovals(storage: storage)
        self.audit = AuditLog(storage: storage)
        self.redactor = redactor
        self.now = now
    }

    /// Decides one call. `prompter` is the person (nil when there is no terminal); `reviewer`
    /// is used only when `run.reviewer` is on.
    public func decide(_ call: GateCall, run: GateRun, prompter: (any ApprovalPrompter)?,
                       reviewer: (any CallReviewer)?) -> GateDecision {
        let tool = call.toolName
        guard call.modes.contains(run.mode) else {
            return record(call, .refuse("refused: \(tool) is not available in a \(run.mode.rawValue) run", by: .policy))
        }
        let command = call.command
        let unproven: String? = call.toolReadOnly ? nil
            : command.map { judge.unprovenPart(of: $0) } ?? "\(tool) is a state-changing tool"
        let readOnly = unproven == nil
        if run.mode == .planning && !readOnly {
            return record(call, .refuse("refused: this is a planning run, which uses read-only tools only, and this call "
                + "could change state (\(unproven!)); a person can allow it by running the request in acting mode "
                + "(termhost ask --acting)", by: .policy))
        }
        let rule = policy.rule(for: tool, readOnly: readOnly, command: command, host: call.host, tags: call.hostTags)
        // A call given a secret is never auto-approved: only the person answers it (its output
        // could carry the secret in any encoding: `base64`, `rev`, `od -c` of stdin are reads).
        let secret = call.carriesSecret
        switch rule.level {
        case .deny:
            return record(call, .refuse("refused: \(tool) is set to deny by \(rule.origin); only a change there "
                + "can allow it", by: .policy))
        case .approve where !secret:
            return record(call, .run(by: .policy), reason: "approve by \(rule.origin)")
        case .approve, .ask:
            break
        }
        var why = rule.level == .ask ? "ask by \(rule.origin)" : "ask because it is given a secret (stdin_secret)"
        if let unproven { why += "; not proven read-only: \(unproven)" }
        if secret {
            guard let prompter else {
                return record(call, .refuse("refused: this call is given a secret (stdin_secret), and only a person "
                    + "at the terminal may approve such a call; none is present", by: .policy))
            }
            let request = ApprovalRequest(tool: tool, host: call.host, command: command, workingDirectory: call.workingDirectory,
                                          argumentsJSON: call.argumentsJSON, reason: why, family: nil)
            let verdict = prompter.decide(request)
            return verdict.answer == .deny ? record(call, .refuse(verdict.refusal, by: verdict.timedOut ? .policy : .person))
                : record(call, .run(by: .person), reason: "\(why); approved once by \(verdict.who)")
        }
        if run.fullAccess && policy.allowsFullAccess {
            return record(call, .run(by: .fullAccess), reason: "\(why); pre-approved by the run's full access")
        }
        let host = call.host ?? ""
        let family = command.map { judge.family(of: $0) } ?? tool
        if let family, policy.allowsRememberedApprovals,
           let remembered = approvals.match(tool: tool, family: family, host: host) {
            return record(call, .run(by: .remembered), reason: "\(why); remembered approval \(remembered.id) for '\(family)'")
        }
        let request = ApprovalRequest(tool: tool, host: call.host, command: command,
                                      workingDirectory: call.workingDirectory, argumentsJSON: call.argumentsJSON,
                                      reason: why, family: policy.allowsRememberedApprovals ? family : nil)
        if run.reviewer && policy.allowsReviewer && !readOnly, let reviewer {
            let verdict = reviewerFailuresExceeded
                ? .unavailable(reason: "the reviewer failed \(Self.reviewerFailureLimit) times in a row and is no longer asked in this run")
                : reviewer.review(request)
            switch verdict {
            case .approve(let reason):
                resetReviewerFailures()
                return record(call, .run(by: .reviewer), reason: "\(why); reviewer: \(reason)")
            case .deny(let reason):
                resetReviewerFailures()
                return record(call, .refuse("refused by the reviewer: \(reason); a person can allow it by running "
                    + "the request from a terminal without \"approve for me\"", by: .reviewer))
            case .unavailable(let reason):
                noteReviewerFailure()
                _ = record(call, .refuse(reason, by: .reviewer), outcome: .unavailable, reason: reason)
                if prompter == nil {
                    return record(call, .refuse("refused: the reviewer could not decide (\(reason)) and no person "
                        + "is present to approve it; \(Self.howToAllow(tool, rule))", by: .reviewer))
                }
            }
        }
        guard let prompter else {
            return record(call, .refuse("refused: this call needs approval (\(why)) and no person is present to "
                + "approve it; \(Self.howToAllow(tool, rule))", by: .policy))
        }
        let verdict = prompter.decide(request)
        switch verdict.answer {
        case .once:
            return record(call, .run(by: .person), reason: "\(why); approved once by \(verdict.who)")
        case .always:
            if let family = request.family {
                _ = try? approvals.remember(tool: tool, family: family, host: host, at: now())
            }
            return record(call, .run(by: .person), reason: "\(why); approved always for '\(request.family ?? tool)' by \(verdict.who)")
        case .deny:
            // A timeout is the policy's refusal (its approvalTimeout), not a person's.
            return record(call, .refuse(verdict.refusal, by: verdict.timedOut ? .policy : .person))
        }
    }

    /// The settings that would allow an Ask without a person, named for the model to pass on.
    static func howToAllow(_ tool: String, _ rule: AssistantPolicy.Rule) -> String {
        let settings = "set \"assistant\": {\"tools\": {\"\(tool)\": \"approve\"}} in the user config "
            + "($XDG_CONFIG_HOME/termhost/config.json), or give the run full access"
        let source = rule.isExplicit && rule.origin.hasPrefix("operator") ? " (the operator's policy must allow it)" : ""
        return "a person can allow it by running the request at a terminal (termhost assistant) and "
            + "answering the prompt, or \(settings)\(source)"
    }

    private var reviewerFailuresExceeded: Bool { reviewerFailures.withLock { $0 >= Self.reviewerFailureLimit } }
    private func noteReviewerFailure() { reviewerFailures.withLock { $0 += 1 } }
    private func resetReviewerFailures() { reviewerFailures.withLock { $0 = 0 } }

    /// Writes the audit record and returns the decision. A failed audit write refuses the call:
    /// nothing runs that the log does not show.
    /// Audits a call the run refused before asking the gate (no such tool, a planning run's
    /// state-changing call): every refusal is in the log, not only the gate's.
    public func recordRefusal(_ call: GateCall, reason: String) {
        _ = record(call, .refuse(reason, by: .policy))
    }

    private func record(_ call: GateCall, _ decision: GateDecision, outcome: AuditLog.Outcome? = nil,
                        reason: String? = nil) -> GateDecision {
        let (by, text, refused): (GateDecider, String, Bool) = switch decision {
        case .run(let by): (by, reason ?? "", false)
        case .refuse(let message, let by): (by, reason ?? message, true)
        }
        let entry = AuditLog.Record(time: now(), run: call.runID, tool: call.toolName, host: call.host ?? "",
                                    command: redactor.redact(call.command ?? call.argumentsJSON),
                                    outcome: outcome ?? (refused ? .refused : .approved), by: by,
                                    reason: redactor.redact(text))
        do {
            try audit.append(entry)
        } catch {
            return .refuse("refused: the audit log could not be written (\(error)); nothing runs unrecorded", by: .policy)
        }
        return decision
    }
}
