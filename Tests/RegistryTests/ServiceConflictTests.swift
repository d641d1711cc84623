import Foundation
import Testing
import TermhostRegistry

/// One provider per service, and IDs that belong to their plugin's namespace.
@Suite struct ServiceConflictTests {
    @Test func aSecondProviderOfAServiceIsRefusedNamingBoth() throws {
        let r = try registry([feature("org.x.a", order: 1, provides: ["org.x.svc/1"]),
                              feature("org.x.b", order: 2, provides: ["org.x.svc/1"]),
                              feature("org.x.user", order: 3, services: ["org.x.svc/1"])])
            .resolve(EffectivePolicy(), hostServices: [])
        #expect(r.state("org.x.b") == .unavailable(.serviceConflict("org.x.svc/1", feature: fid("org.x.b"), providedBy: fid("org.x.a"))))
        #expect(r.state("org.x.b")?.reason == "feature 'org.x.b' provides service 'org.x.svc/1', which feature 'org.x.a' already provides; 'org.x.a' keeps it and 'org.x.b' was not started")
        #expect(r.enabledIDs == ["org.x.a", "org.x.user"])
    }

    @Test func namespacesNestAndTheLongestOwnerWins() {
        #expect(Namespace.contains("org.termhost.ssh", "org.termhost.ssh"))
        #expect(Namespace.contains("org.termhost.ssh", "org.termhost.ssh.agent"))
        #expect(!Namespace.contains("org.termhost.ssh", "org.termhost.sshd"))
        #expect(!Namespace.contains("com.evil.plugin", "org.termhost.ssh"))
        #expect(Namespace.owner(of: "org.termhost.ssh", among: ["org.termhost", "org.termhost.ssh", "com.evil"]) == "org.termhost.ssh")
        #expect(Namespace.isHostService("termhost.store/1") && !Namespace.isHostService("org.termhost.ssh.transport/1"))
    }

    @Test func aPluginSetOrPolicyBeyondItsCapIsRefusedNamingFileAndCap() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cap-\(getpid())-\(Int.random(in: 0..<1_000_000)).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = FileManager.default.createFile(atPath: path, contents: Data(("{}" + String(repeating: " ", count: 1 << 20)).utf8))
        #expect(throws: RegistryError.fileTooLarge(file: path, size: (1 << 20) + 2, cap: 1 << 20)) { try DeploymentPolicy.load(from: path) }
        #expect(RegistryError.fileTooLarge(file: path, size: (1 << 20) + 2, cap: 1 << 20).description
                == "\(path) is 1048578 bytes, more than the 1 MiB such a file may hold; refused")
        #expect(throws: Never.self) { try PluginSet.decode(Data(#"{"name":"n","version":"1","plugins":[]}"#.utf8), file: path) }
    }
}
