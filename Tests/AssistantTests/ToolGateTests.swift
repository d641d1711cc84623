import AssistantCore
import Testing

@Suite struct ToolGateTests {
    let storage = MemoryPolicyStorage()

    func gate(_ policy: AssistantPolicy = AssistantPolicy()) -> ToolGate {
        ToolGate(policy: policy, judge: ClassifierJudge(), storage: storage, now: { 1_800_000_000 })
    }

    var records: [AuditLog.Record] { (try? AuditLog(storage: storage).records()) ?? [] }

    static let acting = GateRun(mode: .acting)

    @Test func aCommandProvenReadOnlyRunsUnaskedEvenInPlanning() {
        let person = ScriptedPrompter([])
        let decision = gate().decide(.exec("df -h"), run: GateRun(mode: .planning), prompter: person, reviewer: nil)
        #expect(decision == .run(by: .policy))
        #expect(person.requests.isEmpty)
        #expect(records.map(\.reason) == ["approve by the default for read-only calls"])
    }

    @Test func planningRefusesACommandNotProvenReadOnlyAndSaysHowToAllowIt() {
        let person = ScriptedPrompter([.once])
        let decision = gate().decide(.exec("systemctl restart nginx"), run: GateRun(mode: .planning, fullAccess: true),
                                     prompter: person, reviewer: nil)
        guard case .refuse(let message, .policy) = decision else { Issue.record("\(decision)"); return }
        #expect(message.hasPrefix("refused: this is a planning run, which uses read-only tools only, and this call could change state ("))
        #expect(message.hasSuffix("a person can allow it by running the request in acting mode (termhost ask --acting)"))
        #expect(person.requests.isEmpty)
    }

    @Test func aToolTheCatalogDoesNotOfferInTheRunsModeIsRefused() {
        let call = GateCall.tool("sftp_write", readOnly: false, modes: [.acting])
        #expect(gate().decide(call, run: GateRun(mode: .planning), prompter: nil, reviewer: nil)
                == .refuse("refused: sftp_write is not available in a planning run", by: .policy))
    }

    @Test func denyHoldsAgainstFullAccessTheReviewerAndThePerson() {
        let policy = AssistantPolicy(operatorPart: .init(tools: ["ssh_exec": .deny], source: "operator policy /etc/termhost/policy.json"))
        let person = ScriptedPrompter([.once])
        let reviewer = ScriptedReviewer(.approve(reason: "fine"))
        let decision = gate(policy).decide(.exec("df -h"), run: GateRun(mode: .acting, fullAccess: true, reviewer: true),
                                           prompter: person, reviewer: reviewer)
        #expect(decision == .refuse("refused: ssh_exec is set to deny by operator policy /etc/termhost/policy.json "
            + "(assistant.tools.ssh_exec); only a change there can allow it", by: .policy))
        #expect(person.requests.isEmpty && reviewer.count == 0)
        #expect(records.map(\.outcome) == [.refused])
    }

    @Test func fullAccessPreApprovesAnAskUnlessThePolicyForbidsIt() {
        let run = GateRun(mode: .acting, fullAccess: true)
        #expect(gate().decide(.exec("systemctl restart nginx"), run: run, prompter: nil, reviewer: nil) == .run(by: .fullAccess))
        let forbidden = AssistantPolicy(operatorPart: .init(fullAccess: false, source: "operator policy P"))
        let person = ScriptedPrompter([.once])
        #expect(gate(forbidden).decide(.exec("systemctl restart nginx"), run: run, prompter: person, reviewer: nil) == .run(by: .person))
        #expect(person.requests.count == 1)
    }

    @Test func anExplicitAskMakesEvenAReadOnlyCallAsk() {
        let policy = AssistantPolicy(userPart: .init(tools: ["ssh_exec": .ask], source: "user config U"))
        let person = ScriptedPrompter([.deny])
        #expect(gate(policy).decide(.exec("df -h"), run: Self.acting, prompter: person, reviewer: nil)
                == .refuse("refused by the person at the terminal", by: .person))
        #expect(person.requests.first?.reason == "ask by user config U (assistant.tools.ssh_exec)")
    }

    @Test func withNobodyPresentAnAskIsRefusedNamingTheSettingThatAllowsIt() {
        let decision = gate().decide(.tool("sftp_write", readOnly: false), run: Self.acting, prompter: nil, reviewer: nil)
        #expect(decision == .refuse("refused: this call needs approval (ask by the default for state-changing calls; "
            + "not proven read-only: sftp_write is a state-changing tool) and no person is present to approve it; "
            + "a person can allow it by running the request at a terminal (termhost assistant) and answering the prompt, "
            + "or set \"assistant\": {\"tools\": {\"sftp_write\": \"approve\"}} in the user config "
            + "($XDG_CONFIG_HOME/termhost/config.json), or give the run full access", by: .policy))
    }

    @Test func thePromptShowsExactlyWhatWillRunWithControlCharactersVisible() {
        let person = ScriptedPrompter([.deny])
        _ = gate().decide(.exec("systemctl restart nginx\u{1b}[2J\necho ok", host: "web\u{7}2"), run: Self.acting,
                          prompter: person, reviewer: nil)
        let request = try! #require(person.requests.first)
        #expect(request.text.hasPrefix("""
            The assistant wants to run ssh_exec on host web\\0072:
              command: systemctl restart nginx\\033[2J\\012echo ok
              working directory: (the login directory)
              why asked: ask by the default for state-changing calls; not proven read-only:
            """))
        #expect(!request.text.contains("\u{1b}") && !request.text.contains("\u{7}"))
    }

    @Test func alwaysRemembersTheCommandFamilyOnThisHostOnly() throws {
        let person = ScriptedPrompter([.always, .deny, .deny, .deny])
        let g = gate()
        #expect(g.decide(.exec("systemctl restart nginx"), run: Self.acting, prompter: person, reviewer: nil) == .run(by: .person))
        #expect(person.requests[0].choices == ["yes, once", "yes, always for 'systemctl restart' on web-2", "no"])
        #expect(g.decide(.exec("systemctl restart sshd"), run: Self.acting, prompter: person, reviewer: nil) == .run(by: .remembered))
        // Another host, another subcommand, or a list built on the approved family: asked again.
        #expect(g.decide(.exec("systemctl restart nginx", host: "web-3"), run: Self.acting, prompter: person, reviewer: nil) != .run(by: .remembered))
        #expect(g.decide(.exec("systemctl stop nginx"), run: Self.acting, prompter: person, reviewer: nil) != .run(by: .remembered))
        #expect(g.decide(.exec("systemctl restart nginx && rm -rf /srv"), run: Self.acting, prompter: person, reviewer: nil) != .run(by: .remembered))
        #expect(person.requests.count == 4)

        let approvals = RememberedApprovals(storage: storage)
        let listed = try approvals.list()
        #expect(listed.map { [$0.tool, $0.family, $0.host] } == [["ssh_exec", "systemctl restart", "web-2"]])
        #expect(try approvals.remove(id: listed[0].id))
        #expect(try !approvals.remove(id: listed[0].id))
        let again = ScriptedPrompter([.once])
        #expect(g.decide(.exec("systemctl restart sshd"), run: Self.acting, prompter: again, reviewer: nil) == .run(by: .person))
    }

    @Test func aCommandWithoutAFamilyIsNotOfferedAlways() {
        let person = ScriptedPrompter([.deny])
        _ = gate().decide(.exec("echo $(cat /etc/shadow)"), run: Self.acting, prompter: person, reviewer: nil)
        #expect(person.requests.first?.family == nil)
        #expect(person.requests.first?.choices == ["yes, once", "no"])
    }

    @Test func rememberedApprovalsAreIgnoredWhenThePolicyTurnsThemOff() throws {
        _ = try RememberedApprovals(storage: storage).remember(tool: "ssh_exec", family: "systemctl restart", host: "web-2", at: 1)
        let policy = AssistantPolicy(operatorPart: .init(rememberApprovals: false, source: "p"))
        let person = ScriptedPrompter([.once])
        #expect(gate(policy).decide(.exec("systemctl restart nginx"), run: Self.acting, prompter: person, reviewer: nil) == .run(by: .person))
        #expect(person.requests.first?.choices == ["yes, once", "no"])
    }

    @Test func theReviewerDecidesAnAskAndItsDenyIsFinal() {
        let run = GateRun(mode: .acting, reviewer: true)
        let yes = ScriptedReviewer(.approve(reason: "restarting nginx is what was asked"))
        #expect(gate().decide(.exec("systemctl restart nginx"), run: run, prompter: nil, reviewer: yes) == .run(by: .reviewer))
        let no = ScriptedReviewer(.deny(reason: "deletes data"))
        let person = ScriptedPrompter([.once])
        #expect(gate().decide(.exec("rm -rf /srv"), run: run, prompter: person, reviewer: no)
                == .refuse("refused by the reviewer: deletes data; a person can allow it by running the request from a "
                    + "terminal without \"approve for me\"", by: .reviewer))
        #expect(person.requests.isEmpty)
        #expect(records.map(\.by) == [.reviewer, .reviewer])
        #expect(records.map(\.outcome) == [.approved, .refused])
    }

    @Test func anUnavailableReviewerFallsBackToThePersonOrRefusesUnattended() {
        let run = GateRun(mode: .acting, reviewer: true)
        let down = ScriptedReviewer(.unavailable(reason: "the reviewer did not answer within 60 seconds"))
        let person = ScriptedPrompter([.once])
        #expect(gate().decide(.exec("systemctl restart nginx"), run: run, prompter: person, reviewer: down) == .run(by: .person))
        #expect(records.map(\.outcome) == [.unavailable, .approved])
        #expect(records.map(\.by) == [.reviewer, .person])

        let unattended = gate().decide(.exec("systemctl restart nginx"), run: run, prompter: nil, reviewer: down)
        guard case .refuse(let message, .reviewer) = unattended else { Issue.record("\(unattended)"); return }
        #expect(message.hasPrefix("refused: the reviewer could not decide (the reviewer did not answer within 60 seconds) and no person is present"))
        #expect(records.suffix(2).map(\.outcome) == [.unavailable, .refused])
    }

    @Test func aReviewerThatFailsThreeTimesInARowIsNoLongerAsked() {
        let run = GateRun(mode: .acting, reviewer: true)
        let down = ScriptedReviewer(.unavailable(reason: "transport"))
        let g = gate()
        for _ in 0..<5 { _ = g.decide(.exec("systemctl restart nginx"), run: run, prompter: nil, reviewer: down) }
        #expect(down.count == 3)
        #expect(records.filter { $0.outcome == .unavailable }.last?.reason
                == "the reviewer failed 3 times in a row and is no longer asked in this run")
    }

    @Test func aCallProvenReadOnlySkipsTheReviewer() {
        let policy = AssistantPolicy(userPart: .init(tools: ["ssh_exec": .ask], source: "u"))
        let reviewer = ScriptedReviewer(.approve(reason: "ok"))
        let person = ScriptedPrompter([.once])
        #expect(gate(policy).decide(.exec("uptime"), run: GateRun(mode: .acting, reviewer: true), prompter: person, reviewer: reviewer)
                == .run(by: .person))
        #expect(reviewer.count == 0)
    }

    @Test func everyDecisionIsAuditedWithWhoWhatWhereAndWhy() {
        let person = ScriptedPrompter([.once])
        _ = gate().decide(.exec("systemctl restart nginx", run: "run-7"), run: Self.acting, prompter: person, reviewer: nil)
        let record = try! #require(records.first)
        #expect(record == AuditLog.Record(time: 1_800_000_000, run: "run-7", tool: "ssh_exec", host: "web-2",
                                          command: "systemctl restart nginx", outcome: .approved, by: .person,
                                          reason: record.reason))
        #expect(record.reason.hasSuffix("; approved once by the person at the terminal"))
        #expect(record.line.hasPrefix("2027-01-15T08:00:00Z run run-7 ssh_exec on web-2: approved by person: systemctl restart nginx ("))
    }

    @Test func aCallIsRefusedWhenItsDecisionCannotBeAudited() {
        let g = ToolGate(policy: AssistantPolicy(), judge: ClassifierJudge(), storage: MemoryPolicyStorage(failing: true))
        #expect(g.decide(.exec("df -h"), run: Self.acting, prompter: nil, reviewer: nil)
                == .refuse("refused: the audit log could not be written (disk full); nothing runs unrecorded", by: .policy))
    }

    @Test func theAuditLogKeepsNoPasswordTheCommandCarried() {
        _ = gate().decide(.exec("mysql --password=hunter22 -e 'select 1'"), run: Self.acting, prompter: nil, reviewer: nil)
        #expect(!storage.allText.contains("hunter22"))
        #expect(records.first?.command == "mysql --password=[redacted] -e 'select 1'")
    }
}
