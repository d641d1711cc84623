import AssistantCore
import Foundation
import Testing
import TestSupport

@Suite struct AssistantPolicyFilesTests {
    @Test func theFilesAreFoundWhereTheHostFindsThem() {
        let paths = AssistantPolicyFiles.paths(["HOME": "/home/u", "XDG_CONFIG_HOME": "relative"])
        #expect(paths.operatorPolicy == "/etc/termhost/policy.json" && paths.userConfig == "/home/u/.config/termhost/config.json")
        let set = AssistantPolicyFiles.paths(["TERMHOST_POLICY": "/tmp/ops/policy.json", "XDG_CONFIG_HOME": "/tmp/ops/config"])
        #expect(set.operatorPolicy == "/tmp/ops/policy.json" && set.userConfig == "/tmp/ops/config/termhost/config.json")
    }

    @Test func bothFilesAreReadAndTheOperatorsRuleHolds() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let policy = dir.write("policy.json", #"{"assistant":{"tools":{"ssh_exec":"ask"}}}"#)
        _ = dir.write("config/termhost/config.json", #"{"assistant":{"tools":{"ssh_exec":"approve","sftp_write":"deny"}}}"#)
        let loaded = try AssistantPolicyFiles.load(["TERMHOST_POLICY": policy, "XDG_CONFIG_HOME": dir.path + "/config"])
        #expect(loaded.rule(for: "ssh_exec", readOnly: true).level == .ask)
        #expect(loaded.rule(for: "sftp_write", readOnly: false).level == .deny)
        #expect(loaded.warnings.count == 1)
    }

    @Test func missingFilesAreDefaultsAndAnUnreadableOneIsAnError() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let none = try AssistantPolicyFiles.load(["TERMHOST_POLICY": "", "XDG_CONFIG_HOME": dir.path])
        #expect(none == AssistantPolicy(operatorPart: .init(source: "operator policy "),
                                        userPart: .init(source: "user config \(dir.path)/termhost/config.json")))
        let locked = dir.write("policy.json", "{}")
        chmod(locked, 0)
        guard getuid() != 0 else { return }   // root reads it anyway
        do {
            _ = try AssistantPolicyFiles.load(["TERMHOST_POLICY": locked, "XDG_CONFIG_HOME": dir.path])
            Issue.record("an unreadable policy was read")
        } catch {
            #expect(error.message == "cannot read \(locked): Permission denied")
        }
    }
}
