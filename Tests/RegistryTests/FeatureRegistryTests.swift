import Testing
import TermhostRegistry

@Suite struct FeatureRegistryTests {
    @Test func duplicateIDIsRefusedNamingBothSources() throws {
        var r = FeatureRegistry()
        try r.register(feature("org.x.sftp", source: "plugin 'org.one' (/p/one)"))
        #expect(throws: RegistryError.duplicateFeature(fid("org.x.sftp"), first: "plugin 'org.one' (/p/one)", second: "plugin 'org.two' (/p/two)")) {
            try r.register(feature("org.x.sftp", source: "plugin 'org.two' (/p/two)"))
        }
        let message = RegistryError.duplicateFeature(fid("org.x.sftp"), first: "plugin 'org.one' (/p/one)", second: "plugin 'org.two' (/p/two)").description
        #expect(message == "feature 'org.x.sftp' is declared twice: by plugin 'org.one' (/p/one) and by plugin 'org.two' (/p/two); the second was not registered")
    }

    @Test func invalidIDsAreRejected() {
        for bad in ["", "nodots", "Org.Upper", "org..empty", ".org.x", "org.x.", "org.x y", "org.-x"] {
            #expect(!FeatureID.isValid(bad), "\(bad) should be invalid")
        }
        for good in ["org.termhost.sftp", "com.example.my-plugin", "io.x.a_b", "org.x2.9"] {
            #expect(FeatureID.isValid(good), "\(good) should be valid")
        }
        #expect(throws: RegistryError.invalidID("nodots")) { try FeatureID("nodots") }
    }

    @Test func missingDependencyIsNotCreatedAndSaysWhy() throws {
        let res = try registry([feature("org.x.sftp", requires: ["org.x.ssh"])]).resolve(EffectivePolicy(), hostServices: [])
        #expect(res.state("org.x.sftp") == .unavailable(.missingDependency(fid("org.x.sftp"), needs: fid("org.x.ssh"))))
        #expect(res.state("org.x.sftp")?.reason == "feature 'org.x.sftp' requires feature 'org.x.ssh', which no installed plugin provides")
    }

    @Test func disabledDependencyCascadesToDependents() throws {
        let r = try registry([feature("org.x.ssh"), feature("org.x.sftp", requires: ["org.x.ssh"]),
                              feature("org.x.sync", requires: ["org.x.sftp"])])
        let res = r.resolve(EffectivePolicy(policy: DeploymentPolicy(disable: [fid("org.x.ssh")])), hostServices: [])
        #expect(res.state("org.x.ssh") == .disabled("disabled by built-in defaults"))
        #expect(res.state("org.x.sftp") == .unavailable(.disabledDependency(fid("org.x.sftp"), needs: fid("org.x.ssh"))))
        #expect(res.state("org.x.sync") == .unavailable(.unavailableDependency(fid("org.x.sync"), needs: fid("org.x.sftp"))))
        #expect(res.enabledIDs.isEmpty)
    }

    @Test func requiredServiceMustBeOfferedByHostOrAnEnabledFeature() throws {
        let r = try registry([
            feature("org.x.sftp", services: ["org.x.transport/1", "termhost.store/1"]),
            feature("org.x.ssh", provides: ["org.x.transport/1"]),
            feature("org.x.orphan", services: ["org.x.nobody/1"]),
        ])
        let res = r.resolve(EffectivePolicy(), hostServices: ["termhost.store/1"])
        // The provider first, although the consumer's ID sorts before it (ServiceOrderTests).
        #expect(res.enabledIDs == ["org.x.ssh", "org.x.sftp"])
        #expect(res.state("org.x.orphan")?.reason == "feature 'org.x.orphan' requires service 'org.x.nobody/1', which no enabled feature provides")

        let noSSH = r.resolve(EffectivePolicy(policy: DeploymentPolicy(disable: [fid("org.x.ssh")])), hostServices: ["termhost.store/1"])
        #expect(noSSH.state("org.x.sftp") == .unavailable(.missingService(fid("org.x.sftp"), service: "org.x.transport/1")))
    }

    @Test func brokenHostServiceGivesItsReason() throws {
        let res = try registry([feature("org.x.vault", services: ["termhost.store/1"])])
            .resolve(EffectivePolicy(), hostServices: [], brokenServices: ["termhost.store/1": "store /d/termhost.db: file is not a database"])
        #expect(res.state("org.x.vault")?.reason == "feature 'org.x.vault' requires service 'termhost.store/1', which is unavailable: store /d/termhost.db: file is not a database")
    }

    @Test func duplicateCommandIsReportedAndTheEarlierFeatureKeepsIt() throws {
        let res = try registry([feature("org.x.a", order: 1, commands: ["go"]), feature("org.x.b", order: 2, commands: ["go"])])
            .resolve(EffectivePolicy(), hostServices: [])
        #expect(res.commandOwners["go"] == fid("org.x.a"))
        #expect(res.problems == [.duplicateCommand("go", kept: fid("org.x.a"), dropped: fid("org.x.b"))])
    }

    @Test func disabledFeaturesCommandsDisappear() throws {
        let r = try registry([feature("org.x.a", commands: ["hello"])])
        #expect(r.resolve(EffectivePolicy(), hostServices: []).commandOwners["hello"] == fid("org.x.a"))
        let res = r.resolve(EffectivePolicy(policy: DeploymentPolicy(disable: [fid("org.x.a")])), hostServices: [])
        #expect(res.commandOwners["hello"] == nil)
    }
}

@Suite struct CommandNameTests {
    @Test func invalidAndBuiltInCommandNamesAreDroppedWithAReason() throws {
        let res = try registry([feature("org.x.a", commands: ["Bad Name", "doctor", "ok-1"])])
            .resolve(EffectivePolicy(), hostServices: [], reservedCommands: ["doctor"])
        #expect(res.commandOwners == ["ok-1": fid("org.x.a")])
        #expect(res.problems == [.invalidCommandName("Bad Name", feature: fid("org.x.a")), .reservedCommand("doctor", feature: fid("org.x.a"))])
        #expect(RegistryError.reservedCommand("doctor", feature: fid("org.x.a")).description
                == "feature 'org.x.a' contributes command 'doctor', which is a built-in termhost command; it was dropped")
    }
}
