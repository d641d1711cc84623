import Foundation
import Testing
import TermhostRegistry

@Suite struct PolicyTests {
    let r: FeatureRegistry = try! registry([feature("org.x.ssh"), feature("org.x.sftp"), feature("org.x.assistant")])

    @Test func defaultDisabledEnablesOnlyListedFeatures() {
        let p = DeploymentPolicy(default: .disabled, enable: [fid("org.x.ssh")], source: "operator policy /etc/p.json")
        let res = r.resolve(EffectivePolicy(policy: p), hostServices: [])
        #expect(res.enabledIDs == ["org.x.ssh"])
        #expect(res.state("org.x.sftp") == .disabled("not enabled by operator policy /etc/p.json (its default is disabled)"))
    }

    @Test func userCannotEnableWhatTheOperatorDisabled() {
        let p = DeploymentPolicy(disable: [fid("org.x.assistant")], source: "operator policy /etc/p.json")
        let u = UserConfig(enable: [fid("org.x.assistant")], source: "user config ~/.config/termhost/config.json")
        let res = r.resolve(EffectivePolicy(policy: p, user: u), hostServices: [])
        #expect(res.state("org.x.assistant") == .disabled("disabled by operator policy /etc/p.json"))
        #expect(res.problems == [.userCannotEnable(fid("org.x.assistant"), source: "user config ~/.config/termhost/config.json")])
    }

    @Test func userMayDisableAnythingNotRequired() {
        let p = DeploymentPolicy(require: [fid("org.x.ssh")], source: "operator policy /etc/p.json")
        let u = UserConfig(disable: [fid("org.x.ssh"), fid("org.x.sftp")], source: "user config c.json")
        let res = r.resolve(EffectivePolicy(policy: p, user: u), hostServices: [])
        #expect(res.state("org.x.sftp") == .disabled("disabled by user config c.json"))
        #expect(res.state("org.x.ssh") == .enabled)
        #expect(res.fatal.isEmpty)
    }

    @Test func requiredFeatureMissingOrUnavailableIsFatalAndSaysWhy() throws {
        let withDep = try registry([feature("org.x.sftp", requires: ["org.x.ssh"])])
        let p = DeploymentPolicy(require: [fid("org.x.sftp"), fid("org.x.metrics")], source: "operator policy /etc/p.json")
        let res = withDep.resolve(EffectivePolicy(policy: p), hostServices: [])
        #expect(res.fatal.map(\.description) == [
            "feature 'org.x.sftp' is required by operator policy /etc/p.json but is not available: feature 'org.x.sftp' requires feature 'org.x.ssh', which no installed plugin provides",
            "feature 'org.x.metrics' is required by operator policy /etc/p.json but is not available: no installed plugin provides it",
        ])
    }

    @Test func unknownIDsInPolicyAndUserConfigAreNamedWithTheirSource() {
        let p = DeploymentPolicy(disable: [fid("org.x.typo")], settings: ["org.x.other": ["a": .number(1)]], source: "operator policy P")
        let u = UserConfig(enable: [fid("org.x.nope")], source: "user config U")
        let problems = r.resolve(EffectivePolicy(policy: p, user: u), hostServices: []).problems
        #expect(problems.contains(.unknownFeatureInPolicy(fid("org.x.typo"), source: "operator policy P")))
        #expect(problems.contains(.unknownFeatureInPolicy(fid("org.x.other"), source: "operator policy P")))
        #expect(problems.contains(.unknownFeatureInPolicy(fid("org.x.nope"), source: "user config U")))
        #expect(RegistryError.unknownFeatureInPolicy(fid("org.x.typo"), source: "operator policy P").description
                == "operator policy P names feature 'org.x.typo', which no installed plugin provides")
    }

    @Test func userSettingsApplyOnlyWhereOverridable() {
        let p = DeploymentPolicy(settings: ["org.x.sftp": ["maxActive": .number(15), "host": .string("a")]],
                                 userOverridable: ["org.x.sftp": ["maxActive"]])
        let u = UserConfig(settings: ["org.x.sftp": ["maxActive": .number(5), "host": .string("b")]], source: "user config U")
        let e = EffectivePolicy(policy: p, user: u)
        #expect(e.setting(fid("org.x.sftp"), "maxActive") == .number(5))
        #expect(e.setting(fid("org.x.sftp"), "host") == .string("a"))
        #expect(e.settings(for: fid("org.x.sftp")) == ["maxActive": .number(5), "host": .string("a")])
        #expect(e.problems(known: [fid("org.x.sftp")]) == [.settingNotOverridable(fid("org.x.sftp"), key: "host", source: "user config U")])
        let wildcard = EffectivePolicy(policy: DeploymentPolicy(userOverridable: ["org.x.sftp": ["*"]]), user: u)
        #expect(wildcard.setting(fid("org.x.sftp"), "host") == .string("b"))
    }

    @Test func policyFileLoadsAndMalformedJSONNamesFileLineAndColumn() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("policy-\(getpid())-\(Int.random(in: 0..<1_000_000))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = dir.appendingPathComponent("good.json").path
        _ = FileManager.default.createFile(atPath: good, contents: Data("""
        { "default": "enabled", "disable": ["org.x.assistant"], "require": ["org.x.ssh"],
          "settings": { "org.x.sftp": { "maxActive": 15 } }, "userOverridable": { "org.x.sftp": ["maxActive"] } }
        """.utf8))
        let p = try DeploymentPolicy.load(from: good)
        #expect(p.disable == [fid("org.x.assistant")])
        #expect(p.require == [fid("org.x.ssh")])
        #expect(p.source == "operator policy \(good)")

        let bad = dir.appendingPathComponent("bad.json").path
        _ = FileManager.default.createFile(atPath: bad, contents: Data("{\n  \"disable\": [\"org.x.a\",]\n  \"x\": 1\n}".utf8))
        #expect { try DeploymentPolicy.load(from: bad) } throws: { error in
            // The missing comma after the array is found where "x" starts: line 3, column 3.
            guard case RegistryError.malformedJSON(let file, let line, let column, _) = error else { return false }
            return file == bad && line == 3 && column == 3 && (error as! RegistryError).description.hasPrefix("\(bad):3:3: malformed JSON")
        }

        let wrongType = dir.appendingPathComponent("type.json").path
        _ = FileManager.default.createFile(atPath: wrongType, contents: Data(#"{ "disable": "org.x.a" }"#.utf8))
        #expect(throws: RegistryError.invalidDocument(file: wrongType, field: "disable", detail: "expected an array")) {
            try DeploymentPolicy.load(from: wrongType)
        }

        let badID = dir.appendingPathComponent("id.json").path
        _ = FileManager.default.createFile(atPath: badID, contents: Data(#"{ "disable": ["NotAnID"] }"#.utf8))
        #expect { try DeploymentPolicy.load(from: badID) } throws: { error in
            (error as? RegistryError)?.description.hasPrefix("\(badID): field 'disable[0]': invalid feature ID 'NotAnID'") == true
        }
    }

    @Test func pluginSetRequiresUniqueIDsAndRealHashes() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("set-\(getpid())-\(Int.random(in: 0..<1_000_000))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let hash = String(repeating: "ab", count: 32)
        let good = dir.appendingPathComponent("good.json").path
        _ = FileManager.default.createFile(atPath: good, contents: Data("""
        { "name": "default", "version": "2026.11", "plugins": [ { "id": "org.x.ssh", "version": "1.0.0", "sha256": "\(hash.uppercased())" } ] }
        """.utf8))
        let set = try PluginSet.load(from: good)
        #expect(set.entry(for: "org.x.ssh")?.sha256 == hash)
        let dup = dir.appendingPathComponent("dup.json").path
        _ = FileManager.default.createFile(atPath: dup, contents: Data("""
        { "name": "d", "version": "1", "plugins": [ { "id": "org.x.a", "version": "1", "sha256": "\(hash)" },
                                                    { "id": "org.x.a", "version": "1", "sha256": "\(hash)" } ] }
        """.utf8))
        #expect(throws: RegistryError.invalidDocument(file: dup, field: "plugins[1].id", detail: "plugin 'org.x.a' is listed twice")) {
            try PluginSet.load(from: dup)
        }
        let short = dir.appendingPathComponent("short.json").path
        _ = FileManager.default.createFile(atPath: short, contents: Data(#"{ "name": "d", "version": "1", "plugins": [ { "id": "org.x.a", "version": "1", "sha256": "abc" } ] }"#.utf8))
        #expect(throws: RegistryError.invalidDocument(file: short, field: "plugins[0].sha256", detail: "expected 64 hexadecimal digits")) {
            try PluginSet.load(from: short)
        }
        let missing = dir.appendingPathComponent("missing.json").path
        #expect(throws: RegistryError.unreadableFile(file: missing, reason: "No such file or directory")) {
            try PluginSet.load(from: missing)
        }
    }
}
