import Foundation
import Testing
import TermhostLoader
import TermhostRegistry
import TermhostRuntime
import TestSupport

/// Checks made before any plugin code runs, on the descriptor that is then loaded.
@Suite struct PreflightTests {
    func inspect(_ dir: TemporaryDirectory, _ entries: [PluginSearchPath.Entry]? = nil, safeMode: Bool = false) -> Inspection {
        var i = Inspection.run(options(dir, plugins: entries ?? [.init(directory: dir.path + "/plugins", origin: .environment)],
                                       safeMode: safeMode), probe: true)
        i.closeDescriptors()
        return i
    }

    @Test func abiMajorTooNewInTheManifestIsRefusedWithoutRunningIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.future", defines: ["CRASH_IN_CONSTRUCTOR"], abi: "2.0")
        let r = inspect(dir).record("org.test.future")
        #expect(r?.failure == .abiMismatch(plugin: "2.0", host: Fixtures.abi))
        #expect(r?.failure?.description == "built for Termhost ABI 2.0 but this host implements ABI \(Fixtures.abi); rebuild it against this host's SDK")
        #expect(r?.probe == nil, "a plugin refused by preflight is never probed")
    }

    @Test func aPluginBuiltForAnOlderMinorLoadsAndANewerMinorIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "old", id: "org.test.old-minor", defines: ["ABI_MINOR=0", "COMMAND_NAME=\"old\""], abi: "1.0")
        try Fixtures.cPlugin(in: dir.path + "/plugins", dirName: "new", id: "org.test.new-minor", defines: ["ABI_MINOR=\(Fixtures.abiMinor + 1)", "COMMAND_NAME=\"new\""], abi: "1.\(Fixtures.abiMinor + 1)")
        let runtime = try HostRuntime.start(options(dir, pluginDir: dir.path + "/plugins"))
        defer { runtime.shutdown() }
        #expect(runtime.records.first { $0.manifest?.id == "org.test.old-minor" }?.failure == nil, "a 1.0 plugin loads in a \(Fixtures.abi) host")
        #expect(runtime.resolution.commandOwners["old"] != nil)
        #expect(runtime.records.first { $0.manifest?.id == "org.test.new-minor" }?.failure == .abiMismatch(plugin: "1.\(Fixtures.abiMinor + 1)", host: Fixtures.abi))
    }

    @Test func abiMajorTooNewInTheLibraryIsCaughtByTheProbe() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.liar", defines: ["ABI_MAJOR=2"])
        #expect(inspect(dir).record("org.test.liar")?.failure == .abiMismatch(plugin: "2.\(Fixtures.abiMinor)", host: Fixtures.abi))
    }

    @Test func manifestIDOrVersionDifferentFromTheLibraryIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "a", id: "org.test.real", defines: ["FEATURE_ID=\"org.test.claimed\""], manifestID: "org.test.claimed")
        try Fixtures.cPlugin(in: dir.path + "/plugins", dirName: "b", id: "org.test.ver", version: "1.0.0", manifestVersion: "2.0.0")
        let i = inspect(dir)
        #expect(i.record("org.test.claimed")?.failure == .entryMismatch(field: "id", manifest: "org.test.claimed", library: "org.test.real"))
        #expect(i.record("org.test.claimed")?.failure?.description == "the manifest says id 'org.test.claimed' but the library says 'org.test.real'")
        #expect(i.record("org.test.ver")?.failure == .entryMismatch(field: "version", manifest: "2.0.0", library: "1.0.0"))
    }

    @Test func manifestFeatureThatTheLibraryDoesNotHaveIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.feat", extraFeatureJSON: #", "scope": "scene""#)
        #expect(inspect(dir).record("org.test.feat")?.failure == .entryMismatch(field: "scope of feature org.test.feat", manifest: "scene", library: "process"))
    }

    @Test func concurrentCommandsMustBeDeclaredAsTheLibrarySetsThem() throws {
        // ABI 1.6: the daemon lets such a feature's commands overlap, so the manifest may not
        // claim it for a library that does not set it, nor hide it.
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "hidden", id: "org.test.hidden", defines: ["CONCURRENT_COMMANDS=1"])
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "claimed", id: "org.test.claimed", extraFeatureJSON: #", "concurrentCommands": true"#)
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "said", id: "org.test.said", defines: ["CONCURRENT_COMMANDS=1"],
                             extraFeatureJSON: #", "concurrentCommands": true"#)
        let i = inspect(dir)
        #expect(i.record("org.test.hidden")?.failure == .entryMismatch(field: "concurrentCommands of feature org.test.hidden", manifest: "false", library: "true"))
        #expect(i.record("org.test.claimed")?.failure == .entryMismatch(field: "concurrentCommands of feature org.test.claimed", manifest: "true", library: "false"))
        #expect(i.record("org.test.said")?.failure == nil)
        #expect(i.resolution.enabled.first { $0.descriptor.id.rawValue == "org.test.said" }?.descriptor.concurrentCommands == true)
    }

    @Test func sha256PinnedByTheManifestMustMatch() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let p = try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.pinned")
        let wrong = String(repeating: "0", count: 64)
        var text = try String(contentsOfFile: p.manifest, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"abi\"", with: "\"sha256\": \"\(wrong)\", \"abi\"")
        try text.write(toFile: p.manifest, atomically: true, encoding: .utf8)
        let r = inspect(dir).record("org.test.pinned")
        guard case .hashMismatch(let lib, let expected, let actual, let by)? = r?.failure else {
            Issue.record("expected a hash mismatch, got \(String(describing: r?.failure))")
            return
        }
        #expect(lib == p.library && expected == wrong && actual == r?.sha256 && by == "its manifest \(p.directory)/manifest.json")
        #expect(r?.probe == nil)
    }

    @Test func pluginSetPinsVersionAndHashAndSafeModeLoadsOnlyTheSet() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let system = dir.sub("system")
        let third = dir.sub("third-party")
        let listed = try Fixtures.cPlugin(in: system, dirName: "listed", id: "org.test.listed", defines: ["COMMAND_NAME=\"a\""])
        try Fixtures.cPlugin(in: system, dirName: "tampered", id: "org.test.tampered", defines: ["COMMAND_NAME=\"b\""])
        try Fixtures.cPlugin(in: system, dirName: "old", id: "org.test.old", defines: ["COMMAND_NAME=\"c\""])
        try Fixtures.cPlugin(in: third, dirName: "extra", id: "org.test.extra", defines: ["COMMAND_NAME=\"d\""])
        let hash = LibraryHash.hex(Array(FileManager.default.contents(atPath: listed.library)!))
        let oldHash = LibraryHash.hex(Array(FileManager.default.contents(atPath: system + "/old/libold.so")!))
        let setPath = dir.write("system/plugin-set.json", """
        { "name": "test-set", "version": "1", "plugins": [
          { "id": "org.test.listed", "version": "1.0.0", "sha256": "\(hash)" },
          { "id": "org.test.tampered", "version": "1.0.0", "sha256": "\(String(repeating: "a", count: 64))" },
          { "id": "org.test.old", "version": "0.9.0", "sha256": "\(oldHash)" } ] }
        """)
        let entries: [PluginSearchPath.Entry] = [.init(directory: third, origin: .environment), .init(directory: system, origin: .system)]
        let normal = inspect(dir, entries)
        #expect(normal.record("org.test.listed")?.failure == nil)
        #expect(normal.record("org.test.extra")?.failure == nil)
        #expect(normal.record("org.test.old")?.failure == .versionMismatch(expected: "0.9.0", actual: "1.0.0", pinnedBy: "plugin set \(setPath)"))
        if case .hashMismatch(_, _, _, let by)? = normal.record("org.test.tampered")?.failure {
            #expect(by == "plugin set \(setPath)")
        } else {
            Issue.record("expected the plugin set's hash pin to refuse org.test.tampered")
        }
        let safe = inspect(dir, entries, safeMode: true)
        #expect(safe.record("org.test.extra")?.failure == .thirdPartyInSafeMode)
        #expect(safe.record("org.test.listed")?.failure == nil)
        #expect(safe.resolution.enabled.map(\.descriptor.id.rawValue) == ["org.test.listed"])
    }

    @Test func samePluginIDFoundTwiceIsShadowedByTheFirstDirectory() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Fixtures.cPlugin(in: dir.sub("first"), dirName: "p", id: "org.test.twice")
        try Fixtures.cPlugin(in: dir.sub("second"), dirName: "p", id: "org.test.twice")
        let i = inspect(dir, [.init(directory: dir.path + "/first", origin: .environment), .init(directory: dir.path + "/second", origin: .user)])
        #expect(i.records.map(\.failure) == [nil, .shadowed(by: dir.path + "/first/p")])
    }

    @Test func malformedManifestNamesFileLineAndColumn() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let manifest = dir.write("plugins/broken/manifest.json", "{\n  \"id\": \"org.test.broken\"\n  \"version\": \"1\"\n}")
        let r = inspect(dir).record(dir: "broken")
        #expect(r?.failure == .badManifest("\(manifest):3:3: malformed JSON: Invalid value"))
        let typed = dir.write("plugins/typed/manifest.json", #"{ "id": "org.test.t", "version": 1, "abi": "1.0", "library": "x.so", "features": [] }"#)
        #expect(inspect(dir).record(dir: "typed")?.failure == .badManifest("\(typed): field 'version': expected a string"))
    }

    @Test func libraryForAnotherArchitectureIsRefusedBeforeLoading() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let p = try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.arm")
        var bytes = [UInt8](FileManager.default.contents(atPath: p.library)!)
        bytes[18] = 183; bytes[19] = 0   // e_machine = EM_AARCH64
        _ = FileManager.default.createFile(atPath: p.library, contents: Data(bytes))
        #expect(inspect(dir).record("org.test.arm")?.failure == .architectureMismatch(library: p.library, plugin: "aarch64", host: "x86_64"))
    }

    @Test func swiftPluginFromAnotherToolchainIsRefusedWithAMessageSayingSo() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let runtimeDir = try #require(Fixtures.swiftRuntimeDirectory)
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.otherswift", defines: ["FAKE_SWIFT_TOOLCHAIN"],
                             linkFlags: ["-L", runtimeDir, "-Wl,--no-as-needed", "-lswiftCore"])
        let failure = inspect(dir).record("org.test.otherswift")?.failure
        guard case .toolchainMismatch(let plugin, let host)? = failure else {
            Issue.record("expected a toolchain mismatch, got \(String(describing: failure))")
            return
        }
        #expect(plugin == "Swift toolchain with LLVM 17.0.0 (0123456789ab)")
        #expect(host.hasPrefix("Swift toolchain with LLVM "))
        #expect(failure!.description.contains("Swift has no stable ABI on Linux, so rebuild it with the host's toolchain"))
    }

    @Test func swiftPluginFromThisToolchainPassesAndLoadsBesideTheCExample() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        try Fixtures.helloSwift(in: plugins)
        try Fixtures.helloC(in: plugins)
        let runtime = try HostRuntime.start(options(dir, pluginDir: plugins))
        defer { runtime.shutdown() }
        #expect(runtime.records.map(\.failure) == [nil, nil])
        #expect(runtime.resolution.enabled.map(\.descriptor.id.rawValue).sorted() == ["org.termhost.examples.hello-c", "org.termhost.examples.hello-swift"])
        #expect(runtime.records.allSatisfy { $0.loadMilliseconds != nil && $0.initMilliseconds != nil })
    }
}

@Suite struct PluginSetFailClosedTests {
    @Test func aMalformedPluginSetRefusesEveryPluginBesideIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let system = dir.sub("system")
        try Fixtures.cPlugin(in: system, dirName: "p", id: "org.test.unverified")
        let set = dir.write("system/plugin-set.json", #"{ "name": "x", "version": "1", "plugins": [ { "id": "org.test.unverified" } ] }"#)
        var i = Inspection.run(options(dir, plugins: [.init(directory: system, origin: .system)]), probe: true)
        i.closeDescriptors()
        #expect(i.record("org.test.unverified")?.failure == .pluginSetUnusable("\(set): field 'plugins[0].version': missing"))
        #expect(i.catalog.problems == ["plugin set unusable, so the plugins beside it are refused: \(set): field 'plugins[0].version': missing"])
    }

    @Test func inSafeModeAUserCopyDoesNotHideThePinnedDistributionCopy() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let dist = dir.sub("dist"), user = dir.sub("user")
        let pinned = try Fixtures.cPlugin(in: dist, dirName: "p", id: "org.test.pinned")
        try Fixtures.cPlugin(in: user, dirName: "p", id: "org.test.pinned", defines: ["COMMAND_NAME=\"other\""])
        let hash = LibraryHash.hex(Array(FileManager.default.contents(atPath: pinned.library)!))
        _ = dir.write("dist/plugin-set.json", #"{ "name": "d", "version": "1", "plugins": [ { "id": "org.test.pinned", "version": "1.0.0", "sha256": "\#(hash)" } ] }"#)
        var i = Inspection.run(options(dir, plugins: [.init(directory: user, origin: .user), .init(directory: dist, origin: .distribution)],
                                       safeMode: true), probe: true)
        i.closeDescriptors()
        #expect(i.records.map(\.failure) == [.thirdPartyInSafeMode, nil])
        #expect(i.resolution.commandOwners["fixture"]?.rawValue == "org.test.pinned")
    }
}

@Suite struct ManifestABITests {
    @Test func aManifestDeclaringAnotherABIThanItsLibrarySaysWhatToWrite() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // Built against this SDK (Fixtures.abi) but the manifest still says 1.0.
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.stale-abi", abi: "1.0")
        var i = Inspection.run(options(dir, pluginDir: dir.path + "/plugins"), probe: true)
        i.closeDescriptors()
        let failure = i.record("org.test.stale-abi")?.failure
        #expect(failure == .abiDeclaredWrong(manifest: "1.0", library: Fixtures.abi))
        #expect(failure?.description.hasSuffix("derive the manifest again from the library (termhost plugins manifest LIBRARY), or set \"abi\": \"\(Fixtures.abi)\" in it") == true)
    }
}
