/// What the policy says about one tool call, before anyone is asked.
///
/// The cases are ordered by strictness (`deny` is the strictest). When several rules apply to
/// one call (the operator's, the user's, the default for its kind), the strictest one wins:
/// Deny > Ask > Approve > the default by mode. See `AssistantPolicy`.
public enum PolicyLevel: String, Sendable, Equatable, CaseIterable, Comparable {
    /// Refused in every run mode, with full access and with the reviewer; the model is told.
    case deny
    /// Needs a yes: from full access, a remembered approval, the reviewer or a person.
    case ask
    /// Runs without asking.
    case approve

    /// Strictness, highest first: deny 2, ask 1, approve 0.
    var strictness: Int {
        switch self {
        case .deny: 2
        case .ask: 1
        case .approve: 0
        }
    }

    /// `a < b` when `a` is less strict than `b`; `max` is therefore the strictest.
    public static func < (a: PolicyLevel, b: PolicyLevel) -> Bool { a.strictness < b.strictness }
}

/// Which tools a run may use at all. Planning offers read-only tools only (an `ssh_exec` counts
/// when the classifier proves its command read-only); acting offers every tool the policy allows.
public enum RunMode: String, Sendable, Equatable, CaseIterable {
    case planning
    case acting
}
