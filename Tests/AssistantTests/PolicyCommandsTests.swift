import AssistantCore
import Testing

@Suite struct PolicyCommandsTests {
    let storage = MemoryPolicyStorage()

    @Test func approvalsAreListedAndRevocableByID() throws {
        #expect(PolicyCommands.approvals([], storage: storage).stdout == "no remembered approvals\n")
        let approval = try RememberedApprovals(storage: storage).remember(tool: "ssh_exec", family: "systemctl restart",
                                                                          host: "web-2", at: 1_800_000_000)
        #expect(PolicyCommands.approvals(["list"], storage: storage).stdout == """
            ID            TOOL      HOST   COMMAND FAMILY     SINCE
            \(approval.id)  ssh_exec  web-2  systemctl restart  2027-01-15T08:00:00Z

            """)
        #expect(PolicyCommands.approvals(["--json"], storage: storage).stdout
                == "[{\"id\":\"\(approval.id)\",\"tool\":\"ssh_exec\",\"family\":\"systemctl restart\",\"host\":\"web-2\",\"created\":1800000000}]\n")
        #expect(PolicyCommands.approvals(["rm", approval.id], storage: storage)
                == .init(stdout: "removed \(approval.id): ssh_exec 'systemctl restart' on web-2\n", stderr: "", status: 0))
        #expect(PolicyCommands.approvals(["rm", approval.id], storage: storage)
                == .init(stdout: "", stderr: "termhost assistant approvals: no approval with ID '\(approval.id)'\n", status: 1))
        #expect(PolicyCommands.approvals(["drop"], storage: storage).status == 2)
    }

    @Test func theAuditLogListsEveryDecisionAsLinesOrJSON() throws {
        let log = AuditLog(storage: storage)
        try log.append(.init(time: 1_800_000_000, run: "r1", tool: "ssh_exec", host: "web-2", command: "df -h",
                             outcome: .approved, by: .policy, reason: "approve by the default for read-only calls"))
        try log.append(.init(time: 1_800_000_000, run: "r2", tool: "sftp_write", host: "web-2", command: "{\"path\":\"/x\"}",
                             outcome: .refused, by: .person, reason: "refused by the person at the terminal"))
        #expect(PolicyCommands.audit([], storage: storage).stdout == """
            2027-01-15T08:00:00Z run r1 ssh_exec on web-2: approved by policy: df -h (approve by the default for read-only calls)
            2027-01-15T08:00:00Z run r2 sftp_write on web-2: refused by person: {"path":"/x"} (refused by the person at the terminal)

            """)
        #expect(PolicyCommands.audit(["--json", "--run", "r1"], storage: storage).stdout
                == "[{\"time\":1800000000,\"run\":\"r1\",\"tool\":\"ssh_exec\",\"host\":\"web-2\",\"command\":\"df -h\",\"decision\":\"approved\",\"by\":\"policy\",\"reason\":\"approve by the default for read-only calls\"}]\n")
        #expect(PolicyCommands.audit(["--since"], storage: storage).status == 2)
    }
}
