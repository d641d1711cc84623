/// What the gate needs to know about an `ssh_exec` command: whether it is proven read-only (and
/// if not, which part was not), and its normalized family for remembered approvals. The
/// production judge is the command classifier; tests may give a table.
public protocol CommandJudge: Sendable {
    /// nil when the command is proven read-only, else the part that was not proven.
    func unprovenPart(of command: String) -> String?
    /// Program plus subcommand with wrappers and arguments dropped ("systemctl restart"); nil
    /// when the command cannot be parsed (then no "always" approval is offered).
    func family(of command: String) -> String?
}

/// The production judge: the command classifier and its command families.
public struct ClassifierJudge: CommandJudge {
    public init() {}

    public func unprovenPart(of command: String) -> String? {
        switch CommandClassifier.classify(command) {
        case .readOnly: nil
        case .mayChangeState(let reason): reason
        }
    }

    public func family(of command: String) -> String? { CommandFamily.of(command) }
}
