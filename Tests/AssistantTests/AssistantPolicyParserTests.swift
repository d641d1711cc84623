import AssistantCore
import Testing

@Suite struct AssistantPolicyParserTests {
    func parse(_ text: String) throws(AssistantPolicyError) -> AssistantPolicyPart {
        try AssistantPolicyPart.parse(Array(text.utf8), source: "operator policy /etc/termhost/policy.json")
    }

    @Test func readsTheAssistantKeyBesideTheHostsOwnFields() throws {
        let part = try parse("""
            { "disable": ["org.termhost.sync"],
              "assistant": { "tools": { "sftp_write": "deny", "ssh_exec": "ask", "*": "approve" },
                             "fullAccess": false, "reviewer": true } }
            """)
        #expect(part.tools == ["sftp_write": .deny, "ssh_exec": .ask, "*": .approve])
        #expect(part.fullAccess == false && part.reviewer == true && part.rememberApprovals == nil)
        #expect(part.source == "operator policy /etc/termhost/policy.json")
    }

    @Test func noFileOrNoKeyIsAnEmptyPart() throws {
        #expect(try AssistantPolicyPart.parse(nil, source: "s") == AssistantPolicyPart(source: "s"))
        #expect(try parse(#"{"default":"enabled"}"#) == AssistantPolicyPart(source: "operator policy /etc/termhost/policy.json"))
    }

    static let refusals: [(String, String)] = [
        ("{", "operator policy /etc/termhost/policy.json: file: malformed JSON or not a JSON object"),
        ("[1]", "operator policy /etc/termhost/policy.json: file: malformed JSON or not a JSON object"),
        (#"{"assistant": []}"#, "operator policy /etc/termhost/policy.json: assistant: not a JSON object"),
        (#"{"assistant": {"tool": {}}}"#, "operator policy /etc/termhost/policy.json: assistant: unknown key 'tool' (expected tools, fullAccess, reviewer, rememberApprovals, approvalTimeout)"),
        (#"{"assistant": {"tools": {"ssh_exec": "allow"}}}"#, #"operator policy /etc/termhost/policy.json: assistant.tools.ssh_exec: expected "deny", "ask" or "approve""#),
        (#"{"assistant": {"tools": {"ssh_exec": true}}}"#, #"operator policy /etc/termhost/policy.json: assistant.tools.ssh_exec: expected "deny", "ask", "approve" or an object of per-command rules"#),
        (#"{"assistant": {"tools": {"SSH_exec": "ask"}}}"#, #"operator policy /etc/termhost/policy.json: assistant.tools: 'SSH_exec' is not a tool name ([a-z][a-z0-9_]{0,63}) or "*""#),
        (#"{"assistant": {"tools": {"a\u001b[2Jb": "ask"}}}"#, #"operator policy /etc/termhost/policy.json: assistant.tools: 'a\033[2Jb' is not a tool name ([a-z][a-z0-9_]{0,63}) or "*""#),
        (#"{"assistant": {"fullAccess": 0}}"#, "operator policy /etc/termhost/policy.json: assistant.fullAccess: expected true or false"),
        (#"{"assistant": {"reviewer": "yes"}}"#, "operator policy /etc/termhost/policy.json: assistant.reviewer: expected true or false"),
        (#"{"assistant": {"approvalTimeout": 0}}"#, "operator policy /etc/termhost/policy.json: assistant.approvalTimeout: expected whole seconds from 1 to 86400"),
        (#"{"assistant": {"approvalTimeout": 2.5}}"#, "operator policy /etc/termhost/policy.json: assistant.approvalTimeout: expected whole seconds from 1 to 86400"),
        (#"{"assistant": {"approvalTimeout": "60"}}"#, "operator policy /etc/termhost/policy.json: assistant.approvalTimeout: expected whole seconds from 1 to 86400"),
    ]

    @Test func theShorterApprovalTimeoutOfTheTwoFilesWinsAndTenMinutesIsTheDefault() throws {
        let op = try parse(#"{"assistant": {"approvalTimeout": 120}}"#)
        #expect(op.approvalTimeout == 120)
        var user = AssistantPolicyPart(source: "user config")
        #expect(AssistantPolicy(operatorPart: op, userPart: user).approvalSeconds == 120)
        user.approvalTimeout = 30
        #expect(AssistantPolicy(operatorPart: op, userPart: user).approvalSeconds == 30)
        user.approvalTimeout = 3600
        #expect(AssistantPolicy(operatorPart: op, userPart: user).approvalSeconds == 120, "a user cannot wait longer than the operator allows")
        #expect(AssistantPolicy().approvalSeconds == 600)
    }

    @Test(arguments: refusals) func aBadPartIsRefusedNamingFileAndField(_ input: String, _ message: String) {
        #expect(throws: AssistantPolicyError.self) { try parse(input) }
        do { _ = try parse(input) } catch { #expect(error.message == message) }
    }

    @Test func aFileOverTheCapIsRefused() {
        let big = [UInt8](repeating: 0x20, count: AssistantPolicyPart.fileCap + 1)
        #expect(throws: AssistantPolicyError.self) { try AssistantPolicyPart.parse(big, source: "s") }
    }
}
