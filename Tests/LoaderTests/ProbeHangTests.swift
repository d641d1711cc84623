import Foundation
import Testing
import TermhostLoader
import TermhostRuntime
import TestSupport

/// What used to hang or run twice: FIFOs in place of plugin files, constructors that fork or
/// leave processes behind, and a probe timeout that kept its quarantines after it changed.
@Suite struct ProbeHangTests {
    @Test func aFIFOInPlaceOfTheLibraryOrTheManifestIsRefusedWithoutBlocking() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let plugins = dir.sub("plugins")
        let lib = try Fixtures.cPlugin(in: plugins, dirName: "lib", id: "org.test.fifolib", defines: ["COMMAND_NAME=\"l\""])
        let man = try Fixtures.cPlugin(in: plugins, dirName: "man", id: "org.test.fifoman", defines: ["COMMAND_NAME=\"m\""])
        try Fixtures.cPlugin(in: plugins, dirName: "ok", id: "org.test.fine", defines: ["COMMAND_NAME=\"ok\""])
        for f in [lib.library, man.manifest] {
            unlink(f)
            #expect(mkfifo(f, 0o600) == 0)
        }
        let start = Date()
        var i = Inspection.run(options(dir, pluginDir: plugins), probe: true)
        i.closeDescriptors()
        #expect(Date().timeIntervalSince(start) < 10)
        #expect(i.record("org.test.fifolib")?.failure == .notLoadable(path: lib.library, reason: "it is a FIFO, not a regular file"))
        #expect(i.record(dir: "man")?.failure == .badManifest("\(man.manifest) is a FIFO, not a regular file; refused"))
        #expect(i.record("org.test.fine")?.failure == nil)
    }

    @Test func aConstructorThatForksIsRefusedNamingTheStage() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.forks", defines: ["FORK_IN_CONSTRUCTOR"])
        var i = Inspection.run(options(dir, pluginDir: dir.path + "/plugins"), probe: true)
        i.closeDescriptors()
        #expect(i.record("org.test.forks")?.failure == .forkedInProbe(stage: "dlopen (the library's constructors)"))
        #expect(i.record("org.test.forks")?.failure?.description == "refused: the plugin forked a copy of the process in dlopen (the library's constructors), and the copy went on running the host's code (every command would run twice)")
    }

    @Test func aProcessLeftHoldingTheReportPipeIsNamedAndNotWaitedFor() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.lingers", defines: ["LINGER_IN_CONSTRUCTOR"])
        let start = Date()
        var i = Inspection.run(options(dir, pluginDir: dir.path + "/plugins", probeTimeout: 30), probe: true)
        i.closeDescriptors()
        #expect(Date().timeIntervalSince(start) < 10, "the probe's descendant sleeps 60 s; the host must not wait for it")
        #expect(i.record("org.test.lingers")?.failure == .probeLeftProcesses(stage: "deinit()"))
    }

    @Test func aTimeoutQuarantineIsProbedAgainWhenTheTimeoutChanges() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "p", id: "org.test.slow", defines: ["SLOW_INIT_MS=700"])
        var tight = Inspection.run(options(dir, pluginDir: dir.path + "/plugins", probeTimeout: 0.3), probe: true)
        tight.closeDescriptors()
        #expect(tight.record("org.test.slow")?.failure == .probeTimedOut(seconds: 0.3, stage: "init()"))
        var again = Inspection.run(options(dir, pluginDir: dir.path + "/plugins", probeTimeout: 0.3), probe: true)
        again.closeDescriptors()
        #expect(again.record("org.test.slow")?.probe == "cached", "under the same timeout the quarantine stands")
        var usual = Inspection.run(options(dir, pluginDir: dir.path + "/plugins", probeTimeout: 5), probe: true)
        usual.closeDescriptors()
        #expect(usual.record("org.test.slow")?.probe == "probed")
        #expect(usual.record("org.test.slow")?.failure == nil)
    }

    @Test func aProbeTimeoutFromACacheOrACallerNeverTraps() {
        #expect(LoadFailure.probeTimedOut(seconds: .infinity, stage: "init()").description == "probe timed out after inf s in init()")
        #expect(LoadFailure.probeTimedOut(seconds: 1e300, stage: "init()").description == "probe timed out after 1e+300 s in init()")
        #expect(ProbeRunner(executable: "/x", timeout: .nan).boundedTimeout == 5)
        #expect(ProbeRunner(executable: "/x", timeout: 0).boundedTimeout == 0.1)
        #expect(ProbeRunner.defaultTimeout(["TERMHOST_PROBE_TIMEOUT": "nan"]) == 5)
        #expect(ProbeRunner.environmentProblem(["TERMHOST_PROBE_TIMEOUT": "0"]) == "TERMHOST_PROBE_TIMEOUT must be a number of seconds from 0.1 to 600, not '0'")
    }
}
