import Foundation
import Testing
import TestSupport

/// Issue 27, items 5 and 7, on real runs (the `termhost` binary, a real sshd, the scripted
/// model): a policy rule for a tool that does not exist fails the run closed, naming the key; a
/// deny undercut by another tool's approve is warned about; every refusal is printed on stderr
/// where the run is watched and written to the audit log.
@Suite(.serialized) struct PolicyVisibilityEndToEndTests {
    typealias Harness = AssistantRunEndToEndTests.Harness
    typealias Chat = AssistantRunEndToEndTests.Chat

    @Test func aMisspeltToolInThePolicyFailsTheRunClosedNamingIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (file, script) = RunAccessEndToEndTests.touching(dir)
        let h = try Harness(dir: dir, script: script)
        defer { h.stop() }
        _ = dir.write("policy.json", #"{"assistant":{"tools":{"ssh_exe":"deny","*":"approve"}}}"#)
        let r = try h.termhost(["ask", "--acting", "--host", "web1", "touch it"])
        #expect(r.status == 1, "\(r.output)")
        #expect(r.stderr.contains("assistant.tools.ssh_exe: no tool 'ssh_exe' in the catalog (did you mean 'ssh_exec'?)"), "\(r.stderr)")
        #expect(h.commandSessions == 0)
        #expect(h.model.requests.isEmpty, "the model was asked although nothing could run")
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test func aDenyUndercutByAnotherToolsApproveIsWarnedAbout() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Harness(dir: dir, script: [Chat.text(["nothing to do"])])
        defer { h.stop() }
        try Fixtures.sftpPlugin(in: h.ssh.plugins)
        _ = dir.write("policy.json", #"{"assistant":{"tools":{"ssh_exec":"deny","sftp_write":"approve"}}}"#)
        let r = try h.termhost(["ask", "--host", "web1", "hello"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stderr.contains("warning: 'ssh_exec' is denied (operator policy"), "\(r.stderr)")
        #expect(r.stderr.contains("but 'sftp_write' is approved (operator policy"), "\(r.stderr)")
        #expect(r.stderr.contains("and it reaches the same hosts"), "\(r.stderr)")
    }

    @Test func aRefusalOfThePlanningRunIsShownAndAudited() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (file, script) = RunAccessEndToEndTests.touching(dir)
        let h = try Harness(dir: dir, script: script)
        defer { h.stop() }
        let r = try h.termhost(["ask", "--host", "web1", "touch it"])
        #expect(r.status == 0, "\(r.output)")
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(r.stderr.contains("[ssh_exec: refused: this is a planning run, and this call could change state"), "\(r.stderr)")
        let audit = try RunAccessEndToEndTests.audit(h)
        #expect(audit.contains("ssh_exec on web1: refused by policy: touch \(file)"), "\(audit)")
        #expect(audit.contains("this is a planning run"), "\(audit)")
    }

    /// Issue 27 item 10: the calls of one turn beyond `maxCallsPerTurn` are refused with a
    /// reason the model sees, in one stderr line and one audit record; a value out of range
    /// fails the run naming the setting.
    @Test func callsBeyondThePerTurnLimitAreRefusedInOneLine() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let calls = (1...5).map { AssistantRunEndToEndTests.exec("call_\($0)", "echo n\($0)") }
        let h = try Harness(dir: dir, script: [Chat.calls(calls), Chat.text(["done"])])
        defer { h.stop() }
        _ = dir.write("policy.json", #"{"settings":{"org.termhost.assistant":{"maxCallsPerTurn":3}}}"#)
        let r = try h.termhost(["ask", "--host", "web1", "count"])
        #expect(r.status == 0, "\(r.output)")
        #expect(h.commandSessions == 3)
        let refusals = r.stderr.split(separator: "\n").filter { $0.contains("at most 3 run per turn") }
        #expect(refusals.count == 1 && refusals[0].contains("(2 calls of this turn refused so)"), "\(r.stderr)")
        let toModel = try RunAccessEndToEndTests.toolResult(h)
        #expect(toModel.components(separatedBy: "this turn asked for 5 tool calls and at most 3 run per turn").count - 1 >= 2, "\(toModel)")
        #expect(try RunAccessEndToEndTests.audit(h).contains("at most 3 run per turn"))

        _ = dir.write("policy.json", #"{"settings":{"org.termhost.assistant":{"maxCallsPerTurn":0}}}"#)
        let bad = try h.termhost(["ask", "--host", "web1", "count"])
        #expect(bad.status == 1 && bad.stderr.contains("maxCallsPerTurn (setting of org.termhost.assistant)"), "\(bad.output)")
    }

    /// Issue 27 item 11: `termhost tools call` is held to the operator's Deny too, and every
    /// call made there, run or refused, is in the audit log `by: cli`.
    @Test func theCommandLinesToolCallIsHeldToDenyAndAudited() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try Harness(dir: dir, script: [])
        defer { h.stop() }
        let file = dir.path + "/touched"
        let arguments = #"{"host":"web1","command":"touch \#(file)"}"#
        _ = dir.write("policy.json", #"{"assistant":{"tools":{"ssh_exec":"deny"}}}"#)
        let refused = try h.termhost(["tools", "call", "ssh_exec", arguments])
        #expect(refused.status == 1, "\(refused.output)")
        #expect(refused.stderr.contains("refused: ssh_exec is set to deny by operator policy"), "\(refused.stderr)")
        #expect(h.commandSessions == 0)
        #expect(!FileManager.default.fileExists(atPath: file))
        // Per-command deny rules only the gate can match: the command line fails closed.
        _ = dir.write("policy.json", #"{"assistant":{"tools":{"ssh_exec":{"deny":["rm *"]}}}}"#)
        let patterns = try h.termhost(["tools", "call", "ssh_exec", arguments])
        #expect(patterns.status == 1 && patterns.stderr.contains("has per-command deny rules"), "\(patterns.output)")
        #expect(!FileManager.default.fileExists(atPath: file))
        // The tool's own entry decides before "*".
        _ = dir.write("policy.json", #"{"assistant":{"tools":{"*":"deny","ssh_exec":"approve"}}}"#)
        let ran = try h.termhost(["tools", "call", "ssh_exec", arguments])
        #expect(ran.status == 0, "\(ran.output)")
        #expect(FileManager.default.fileExists(atPath: file))
        let audit = try RunAccessEndToEndTests.audit(h)
        #expect(audit.contains("ssh_exec on web1: refused by cli: touch \(file)"), "\(audit)")
        #expect(audit.contains("per-command deny rules"), "\(audit)")
        #expect(audit.contains("ssh_exec on web1: approved by cli: touch \(file)"), "\(audit)")
    }

    /// Issue 27 item 6 on a real run: the operator's per-command rules (`touch *` approved
    /// unattended, `rm *` denied even through `sudo`) decide on the parsed command; a user's
    /// approve of `rm *` does not widen the operator's deny.
    @Test func perCommandRulesDecideOnTheParsedCommand() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let touched = dir.path + "/touched", kept = dir.write("kept", "x")
        let h = try Harness(dir: dir, script: [
            Chat.calls([AssistantRunEndToEndTests.exec("call_1", "touch \(touched)"),
                        AssistantRunEndToEndTests.exec("call_2", "sudo rm \(kept)")]),
            Chat.text(["done"]),
        ])
        defer { h.stop() }
        _ = dir.write("policy.json", #"{"assistant":{"tools":{"ssh_exec":{"approve":["touch *"],"deny":["rm *"],"default":"ask"}}}}"#)
        _ = dir.write("config/termhost/config.json", #"{"assistant":{"tools":{"ssh_exec":{"approve":["rm *"]}}}}"#)
        let r = try h.termhost(["ask", "--acting", "--host", "web1", "tidy up"])
        #expect(r.status == 0, "\(r.output)")
        #expect(FileManager.default.fileExists(atPath: touched), "the approved pattern did not run unattended")
        #expect(FileManager.default.fileExists(atPath: kept), "the denied command ran")
        let audit = try RunAccessEndToEndTests.audit(h)
        #expect(audit.contains("approved by policy: touch \(touched) (approve by operator policy"), "\(audit)")
        #expect(audit.contains("assistant.tools.ssh_exec.approve 'touch *'"), "\(audit)")
        #expect(audit.contains("refused by policy: sudo rm \(kept)"), "\(audit)")
    }
}
