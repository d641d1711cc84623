#if canImport(TermhostSDK)
import TermhostSDK   // the policy fuzz target compiles VisibleText.swift in instead
#endif

/// Design: who may do what, from two files. The operator's policy (`policy.json`, key
/// `"assistant"`) fixes a ceiling; the user's config (`config.json`, key `"assistant"`) can
/// only narrow it. Per tool, three levels (`PolicyLevel`); when more than one rule applies,
/// the strictest wins:
///
/// 1. Deny: any rule (operator's or user's, by name or `"*"`) that says `deny` refuses the call
///    in every mode, with full access, with the reviewer.
/// 2. Ask: otherwise, any rule that says `ask` makes the call need a yes.
/// 3. Approve: otherwise, a rule that says `approve` lets it run.
/// 4. Mode: a tool no rule names gets the default for its kind: read-only calls Approve,
///    state-changing calls Ask (an `ssh_exec` is read-only only when the classifier proves it).
///
/// A user rule wider than the operator's rule for the same tool (`approve` over the operator's
/// `ask`) is ignored with a warning; a tool the operator does not name is the user's to set.
/// Full access and the reviewer act only on an Ask, and only where both files allow them.
public struct AssistantPolicy: Sendable, Equatable {
    public var operatorPart: AssistantPolicyPart
    public var userPart: AssistantPolicyPart

    public init(operatorPart: AssistantPolicyPart = .init(source: "built-in defaults"),
                userPart: AssistantPolicyPart = .init(source: "user config")) {
        self.operatorPart = operatorPart
        self.userPart = userPart
    }

    /// The level of one call and the rule that set it, for messages and the audit log.
    public struct Rule: Sendable, Equatable {
        public var level: PolicyLevel
        /// Where the level came from: `operator policy FILE (assistant.tools.ssh_exec)`,
        /// `user config FILE (assistant.tools.*)`, or `the default for state-changing tools`.
        public var origin: String
        /// True when the level came from a file, false when it is the default by kind.
        public var isExplicit: Bool
    }

    /// The rule for a call of `tool`; `readOnly` is the call's kind (for `ssh_exec`, the
    /// classifier's verdict on its command, not the catalog's flag).
    /// `host` is the call's host argument and `tags` that saved host's tags (nil when they
    /// could not be read: rules by tag then deny).
    public func rule(for tool: String, readOnly: Bool, command: String? = nil, host: String? = nil, tags: [String]? = nil) -> Rule {
        let fixed = operatorPart.rule(for: tool, command: command, host: host, tags: tags)
        let chosen = userPart.rule(for: tool, command: command, host: host, tags: tags)
        switch (fixed, chosen) {
        case let (op?, user?):
            return user.level > op.level ? user : op
        case let (op?, nil):
            return op
        case let (nil, user?):
            return user
        case (nil, nil):
            return Rule(level: readOnly ? .approve : .ask,
                        origin: readOnly ? "the default for read-only calls" : "the default for state-changing calls",
                        isExplicit: false)
        }
    }

    /// Whether either file has rules by tag for `tool`, so a call's host's tags must be read.
    public func needsTags(_ tool: String) -> Bool { operatorPart.needsTags(tool) || userPart.needsTags(tool) }

    /// Whether a run may use full access: both files must allow it (the default is yes).
    public var allowsFullAccess: Bool { operatorPart.fullAccess != false && userPart.fullAccess != false }
    /// Whether Ask calls may go to the reviewer ("approve for me"): both files must allow it.
    public var allowsReviewer: Bool { operatorPart.reviewer != false && userPart.reviewer != false }
    /// Whether "always for this command family on this host" is offered and honoured.
    public var allowsRememberedApprovals: Bool {
        operatorPart.rememberApprovals != false && userPart.rememberApprovals != false
    }

    /// How long an Ask that waits in the daemon for an answer from any client (`termhost
    /// approvals`) may wait before it is refused: the shorter of the two files' values, 600 s
    /// when neither sets one. A terminal's own prompt waits for its person as before.
    public var approvalSeconds: Int {
        [operatorPart.approvalTimeout, userPart.approvalTimeout].compactMap { $0 }.min() ?? AssistantPolicyPart.defaultApprovalTimeout
    }

    /// The user's choices that try to widen the operator's, each ignored, as warning lines.
    public var warnings: [String] {
        var out: [String] = []
        for (tool, level) in userPart.tools.sorted(by: { $0.key < $1.key }) {
            guard let op = operatorPart.rule(for: tool), level < op.level else { continue }
            out.append("\(userPart.source) sets assistant tool '\(tool)' to \(level.rawValue), but \(op.origin) says \(op.level.rawValue); the operator's choice stands")
        }
        for (key, op, user) in [("fullAccess", operatorPart.fullAccess, userPart.fullAccess),
                                ("reviewer", operatorPart.reviewer, userPart.reviewer),
                                ("rememberApprovals", operatorPart.rememberApprovals, userPart.rememberApprovals)]
        where op == false && user == true {
            out.append("\(userPart.source) turns on assistant.\(key), but \(operatorPart.source) turns it off; the operator's choice stands")
        }
        return out
    }
}

/// The `"assistant"` object of one file (the operator's policy or the user's config).
///
/// ```json
/// "assistant": { "tools": { "sftp_write": "deny", "ssh_exec": "ask", "*": "ask" },
///                "fullAccess": false, "reviewer": true, "rememberApprovals": true,
///                "approvalTimeout": 600 }
/// ```
public struct AssistantPolicyPart: Sendable, Equatable {
    /// Tool name → level; `"*"` covers every tool the file does not name.
    public var tools: [String: PolicyLevel]
    /// Per-command rules by tool (`ssh_exec` only); their `default` is also in `tools`.
    public var commandRules: [String: CommandRules] = [:]
    /// `false` forbids full access; absent (nil) leaves it to the other file.
    public var fullAccess: Bool?
    /// `false` forbids the reviewer ("approve for me").
    public var reviewer: Bool?
    /// `false` forbids remembered approvals (every Ask is asked again).
    public var rememberApprovals: Bool?
    /// Seconds an Ask waiting in the daemon is kept before it is refused; nil leaves it to the
    /// other file (the shorter wins).
    public var approvalTimeout: Int?
    public static let approvalTimeoutBounds = 1...86_400
    public static let defaultApprovalTimeout = 600
    /// `operator policy FILE` or `user config FILE`, for messages.
    public var source: String

    public init(tools: [String: PolicyLevel] = [:], fullAccess: Bool? = nil, reviewer: Bool? = nil,
                rememberApprovals: Bool? = nil, source: String) {
        self.tools = tools
        self.fullAccess = fullAccess
        self.reviewer = reviewer
        self.rememberApprovals = rememberApprovals
        self.source = source
    }

    /// This file's rule for `tool` and, for `ssh_exec`, its command: a per-command pattern
    /// first, else the tool's level by name, else `"*"`, else none.
    func rule(for tool: String, command: String?, host: String? = nil, tags: [String]? = nil) -> AssistantPolicy.Rule? {
        if let command, let rules = commandRules[tool], let hit = rules.level(for: command, host: host, tags: tags) {
            return .init(level: hit.level, origin: "\(source) (assistant.tools.\(tool).\(VisibleText.of(hit.origin)))", isExplicit: true)
        }
        return rule(for: tool)
    }

    /// Whether this file has rules by tag for `tool`: the call's host's tags are then needed.
    func needsTags(_ tool: String) -> Bool { !(commandRules[tool]?.tags.isEmpty ?? true) }

    /// This file's rule for `tool`: by name, else `"*"`, else none.
    func rule(for tool: String) -> AssistantPolicy.Rule? {
        if let level = tools[tool] {
            return .init(level: level, origin: "\(source) (assistant.tools.\(tool))", isExplicit: true)
        }
        if let level = tools["*"] {
            return .init(level: level, origin: "\(source) (assistant.tools.*)", isExplicit: true)
        }
        return nil
    }
}
