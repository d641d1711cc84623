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
}
