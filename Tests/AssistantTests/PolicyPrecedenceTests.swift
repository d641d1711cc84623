import AssistantCore
import Testing

/// Deny > Ask > Approve > the default by kind, case by case, across the operator's policy and
/// the user's config.
@Suite struct PolicyPrecedenceTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var op: [String: PolicyLevel]
        var user: [String: PolicyLevel]
        var readOnly: Bool
        var level: PolicyLevel
        var origin: String
        var testDescription: String { "operator \(op) user \(user) readOnly \(readOnly) -> \(level)" }
    }

    static let cases: [Case] = [
        // The default by kind, when no file names the tool.
        Case(op: [:], user: [:], readOnly: true, level: .approve, origin: "the default for read-only calls"),
        Case(op: [:], user: [:], readOnly: false, level: .ask, origin: "the default for state-changing calls"),
        // A rule beats the default, in both directions.
        Case(op: ["sftp_write": .approve], user: [:], readOnly: false, level: .approve, origin: "operator policy P (assistant.tools.sftp_write)"),
        Case(op: ["sftp_write": .ask], user: [:], readOnly: true, level: .ask, origin: "operator policy P (assistant.tools.sftp_write)"),
        Case(op: [:], user: ["sftp_write": .deny], readOnly: true, level: .deny, origin: "user config U (assistant.tools.sftp_write)"),
        Case(op: [:], user: ["sftp_write": .approve], readOnly: false, level: .approve, origin: "user config U (assistant.tools.sftp_write)"),
        // Deny beats Ask beats Approve, whoever says it.
        Case(op: ["sftp_write": .deny], user: ["sftp_write": .approve], readOnly: false, level: .deny, origin: "operator policy P (assistant.tools.sftp_write)"),
        Case(op: ["sftp_write": .deny], user: ["sftp_write": .ask], readOnly: false, level: .deny, origin: "operator policy P (assistant.tools.sftp_write)"),
        Case(op: ["sftp_write": .approve], user: ["sftp_write": .deny], readOnly: false, level: .deny, origin: "user config U (assistant.tools.sftp_write)"),
        Case(op: ["sftp_write": .ask], user: ["sftp_write": .deny], readOnly: false, level: .deny, origin: "user config U (assistant.tools.sftp_write)"),
        Case(op: ["sftp_write": .ask], user: ["sftp_write": .approve], readOnly: false, level: .ask, origin: "operator policy P (assistant.tools.sftp_write)"),
        Case(op: ["sftp_write": .approve], user: ["sftp_write": .ask], readOnly: false, level: .ask, origin: "user config U (assistant.tools.sftp_write)"),
        Case(op: ["sftp_write": .approve], user: ["sftp_write": .approve], readOnly: false, level: .approve, origin: "operator policy P (assistant.tools.sftp_write)"),
        // "*" covers the tools a file does not name; a name beats that file's "*".
        Case(op: ["*": .ask], user: [:], readOnly: true, level: .ask, origin: "operator policy P (assistant.tools.*)"),
        Case(op: ["*": .deny, "sftp_write": .approve], user: [:], readOnly: false, level: .approve, origin: "operator policy P (assistant.tools.sftp_write)"),
        Case(op: ["*": .ask], user: ["sftp_write": .approve], readOnly: false, level: .ask, origin: "operator policy P (assistant.tools.*)"),
        Case(op: ["*": .approve], user: ["*": .deny], readOnly: true, level: .deny, origin: "user config U (assistant.tools.*)"),
        Case(op: ["get_metrics": .deny], user: [:], readOnly: false, level: .ask, origin: "the default for state-changing calls"),
    ]

    @Test(arguments: cases) func theStrictestRuleWins(_ c: Case) {
        let policy = AssistantPolicy(operatorPart: .init(tools: c.op, source: "operator policy P"),
                                     userPart: .init(tools: c.user, source: "user config U"))
        let rule = policy.rule(for: "sftp_write", readOnly: c.readOnly)
        #expect(rule.level == c.level)
        #expect(rule.origin == c.origin)
    }

    @Test func aUserRuleWiderThanTheOperatorsIsReportedAndIgnored() {
        let policy = AssistantPolicy(operatorPart: .init(tools: ["ssh_exec": .ask], fullAccess: false, source: "operator policy /etc/termhost/policy.json"),
                                     userPart: .init(tools: ["ssh_exec": .approve, "sftp_read": .deny], fullAccess: true, source: "user config /home/u/.config/termhost/config.json"))
        #expect(policy.warnings == [
            "user config /home/u/.config/termhost/config.json sets assistant tool 'ssh_exec' to approve, but operator policy /etc/termhost/policy.json (assistant.tools.ssh_exec) says ask; the operator's choice stands",
            "user config /home/u/.config/termhost/config.json turns on assistant.fullAccess, but operator policy /etc/termhost/policy.json turns it off; the operator's choice stands",
        ])
        #expect(!policy.allowsFullAccess)
    }

    @Test func fullAccessReviewerAndRememberingNeedBothFilesToAllowThem() {
        #expect(AssistantPolicy().allowsFullAccess && AssistantPolicy().allowsReviewer && AssistantPolicy().allowsRememberedApprovals)
        let byUser = AssistantPolicy(userPart: .init(reviewer: false, rememberApprovals: false, source: "u"))
        #expect(byUser.allowsFullAccess && !byUser.allowsReviewer && !byUser.allowsRememberedApprovals)
        let byOperator = AssistantPolicy(operatorPart: .init(fullAccess: false, source: "p"), userPart: .init(fullAccess: true, source: "u"))
        #expect(!byOperator.allowsFullAccess)
    }
}
