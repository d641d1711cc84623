import Foundation
import Testing
import TermhostLoader
import TermhostRuntime
import TestSupport

/// Plugins that misbehave the first time they run are found in the probe's child process,
/// quarantined with their cause, and the host carries on with the others.
@Suite struct ProbeQuarantineTests {
    @Test func crashInConstructorIsQuarantinedAndTheOtherPluginsStillLoad() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        let bad = try Fixtures.cPlugin(in: plugins, dirName: "crasher", id: "org.test.crasher", defines: ["CRASH_IN_CONSTRUCTOR"])
        try Fixtures.cPlugin(in: plugins, dirName: "good", id: "org.test.good", defines: ["COMMAND_NAME=\"good\""])
        let runtime = try HostRuntime.start(options(dir, pluginDir: plugins))
        defer { runtime.shutdown() }
        let inspection = runtime.inspection
        #expect(inspection.record("org.test.crasher")?.failure == .crashedInProbe(signal: SIGSEGV, stage: "dlopen (the library's constructors)"))
        #expect(inspection.record("org.test.crasher")?.failure?.description == "probe crashed with SIGSEGV in dlopen (the library's constructors)")
        #expect(inspection.record("org.test.good")?.failure == nil)
        #expect(runtime.resolution.commandOwners["good"]?.rawValue == "org.test.good")
        #expect(runtime.resolution.feature(.init(checked: "org.test.crasher")) == nil)
        _ = bad
    }

    @Test func crashInInitIsQuarantinedWithTheStage() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.initcrash", defines: ["CRASH_IN_INIT"])
        var inspection = Inspection.run(options(dir, pluginDir: dir.path + "/plugins"), probe: true)
        inspection.closeDescriptors()
        #expect(inspection.record("org.test.initcrash")?.failure == .crashedInProbe(signal: SIGSEGV, stage: "init()"))
    }

    @Test func hangInInitTimesOutAndIsQuarantined() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.hang", defines: ["HANG_IN_INIT"])
        let start = Date()
        var inspection = Inspection.run(options(dir, pluginDir: dir.path + "/plugins", probeTimeout: 1), probe: true)
        inspection.closeDescriptors()
        #expect(inspection.record("org.test.hang")?.failure == .probeTimedOut(seconds: 1, stage: "init()"))
        #expect(inspection.record("org.test.hang")?.failure?.description == "probe timed out after 1 s in init()")
        #expect(Date().timeIntervalSince(start) < 10)
    }

    @Test func initFailureCarriesThePluginsOwnMessage() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.refuses", defines: ["FAIL_INIT=\"needs /dev/kvm\""])
        var inspection = Inspection.run(options(dir, pluginDir: dir.path + "/plugins"), probe: true)
        inspection.closeDescriptors()
        #expect(inspection.record("org.test.refuses")?.failure?.description == "error during initialization: needs /dev/kvm")
    }

    @Test func missingEntrySymbolIsNamed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let p = try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.noentry", defines: ["ENTRY_NAME=not_the_entry"])
        var inspection = Inspection.run(options(dir, pluginDir: dir.path + "/plugins"), probe: true)
        inspection.closeDescriptors()
        #expect(inspection.record("org.test.noentry")?.failure == .noEntryPoint(symbol: "termhost_plugin_entry", path: p.library))
        #expect(inspection.record("org.test.noentry")?.failure?.description == "no entry point termhost_plugin_entry in shared library \(p.library)")
    }

    @Test func quarantineIsCachedAndAChangedLibraryIsProbedAgain() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        try Fixtures.cPlugin(in: plugins, dirName: "p", id: "org.test.flaky", defines: ["CRASH_IN_INIT"])
        let o = options(dir, pluginDir: plugins)
        var first = Inspection.run(o, probe: true)
        first.closeDescriptors()
        #expect(first.record("org.test.flaky")?.probe == "probed")
        var second = Inspection.run(o, probe: true)
        second.closeDescriptors()
        #expect(second.record("org.test.flaky")?.probe == "cached")
        #expect(second.record("org.test.flaky")?.failure == .crashedInProbe(signal: SIGSEGV, stage: "init()"))
        // The author fixes the bug: same path, new contents.
        try Fixtures.cPlugin(in: plugins, dirName: "p", id: "org.test.flaky")
        var third = Inspection.run(o, probe: true)
        third.closeDescriptors()
        #expect(third.record("org.test.flaky")?.probe == "probed")
        #expect(third.record("org.test.flaky")?.failure == nil)
    }
}
