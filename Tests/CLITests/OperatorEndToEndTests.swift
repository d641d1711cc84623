import Foundation
import Testing
import TestSupport

@Suite struct OperatorEndToEndTests {
    @Test func aDisabledFeaturesCommandsDisappearAndSayWhy() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.helloC(in: cli.plugins)
        let policy = cli.policy(#"{ "disable": ["org.termhost.examples.hello-c"] }"#)
        let r = try cli.run("hello")
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("termhost: command 'hello' is unavailable: feature 'org.termhost.examples.hello-c' is disabled: disabled by operator policy \(policy)"))
        #expect(!(try cli.run("help").stdout.contains("hello ")))
        let features = try cli.run("features")
        #expect(features.stdout.contains("org.termhost.examples.hello-c: disabled by operator policy \(policy)"))
    }

    @Test func aMissingRequiredFeatureStopsTheHostWithTheReason() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.helloC(in: cli.plugins)
        let policy = cli.policy(#"{ "require": ["org.termhost.ssh"] }"#)
        let r = try cli.run("hello")
        #expect(r.status == 3)
        #expect(r.stderr == "feature 'org.termhost.ssh' is required by operator policy \(policy) but is not available: no installed plugin provides it\ntermhost: refusing to start without the required features above\n")
        #expect(r.stdout.isEmpty)
    }

    @Test func malformedPolicyRefusesToStartButDoctorStillExplains() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.helloC(in: cli.plugins)
        let policy = cli.policy("{\n  \"disable\": [\"org.termhost.examples.hello-c\"\n}\n")
        let r = try cli.run("hello")
        #expect(r.status == 3)
        #expect(r.stderr.hasPrefix("\(policy):3:1: malformed JSON"))
        let doctor = try cli.run("doctor")
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("  - \(policy):3:1: malformed JSON"))
    }

    @Test func unknownFeatureInPolicyIsReportedNamingTheFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.helloC(in: cli.plugins)
        let policy = cli.policy(#"{ "disable": ["org.termhost.typo"] }"#)
        let r = try cli.run("features")
        #expect(r.stdout.contains("warning: operator policy \(policy) names feature 'org.termhost.typo', which no installed plugin provides"))
        #expect(try cli.run("hello").status == 0, "an unknown ID is a warning, not a reason to stop")
    }

    @Test func doctorShowsAQuarantinedPluginWithItsCauseAndExitsOne() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.cPlugin(in: cli.plugins, dirName: "bad", id: "org.test.bad", defines: ["CRASH_IN_INIT"])
        try Fixtures.helloC(in: cli.plugins)
        let doctor = try cli.run("doctor")
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("org.test.bad 1.0.0: probe crashed with SIGSEGV in init(); it will be probed again when libbad.so or its manifest changes"))
        #expect(doctor.stdout.contains("✓  org.termhost.examples.hello-c 1.0.0"))
        #expect(try cli.run("hello").status == 0, "one broken plugin never stops the others")
    }

    @Test func safeModeLoadsOnlyTheInstalledPluginSet() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var cli = CLI(dir)
        let system = dir.sub("system") + "/termhost/plugins"
        let listed = try Fixtures.helloC(in: system)
        try Fixtures.cPlugin(in: cli.plugins, dirName: "third", id: "org.test.third", defines: ["COMMAND_NAME=\"third\""])
        let hash = try Shell.run("/usr/bin/sha256sum", [listed.library]).stdout.prefix(64)
        _ = dir.write("system/termhost/plugins/plugin-set.json", """
        { "name": "test", "version": "1", "plugins": [ { "id": "org.termhost.examples.hello-c", "version": "1.0.0", "sha256": "\(hash)" } ] }
        """)
        cli.extraEnvironment = [:]
        #expect(try cli.run("third").status == 0)
        let safe = try cli.run("--safe-mode", "third")
        #expect(safe.status == 1)
        #expect(safe.stderr == "termhost: command 'third' is unavailable: plugin 'org.test.third' (\(cli.plugins)/third) was not loaded: skipped in safe mode: only the distribution's and the system's plugin directories are used\n")
        #expect(try cli.run("--safe-mode", "hello").status == 0)
        #expect(try cli.run("--safe-mode", "plugins", "list").stdout.contains("org.test.third 1.0.0: skipped in safe mode: only the distribution's and the system's plugin directories are used"))
    }

    @Test func anUnreadablePluginDirectoryIsNamedAndTheRestLoads() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.helloC(in: cli.plugins)
        let locked = dir.sub("plugins/locked")
        chmod(locked, 0)
        var args = [Paths.termhost, "plugins", "list"]
        var executable = Paths.termhost
        if getuid() == 0 {
            // Root reads every directory; check as an unprivileged user, as an operator would see it.
            chmod(dir.path, 0o755)
            _ = try Shell.run("/bin/chmod", ["-R", "a+rwX", dir.path])
            chmod(locked, 0)
            executable = "/usr/bin/setpriv"
            args = ["--reuid=65534", "--regid=65534", "--clear-groups"] + args
        } else {
            args.removeFirst()
        }
        let r = try Shell.run(executable, args, environment: cli.environment)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout.contains("cannot read plugin directory \(locked): Permission denied"))
        #expect(r.stdout.contains("org.termhost.examples.hello-c"))
    }

    @Test func sigtermDuringACommandShutsDownWithinTheBoundEvenIfAPluginHangs() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.cPlugin(in: cli.plugins, dirName: "h", id: "org.test.h", defines: ["HANG_IN_COMMAND", "HANG_IN_SHUTDOWN"])
        let bg = try Background(Paths.termhost, ["fixture"], environment: cli.environment)
        let p = bg.process, out = bg.stdout
        // Wait until the command is running (it prints before hanging).
        let line = out.fileHandleForReading.availableDataOrLine()
        #expect(line.hasPrefix("fixture ran"))
        let start = Date()
        p.terminate()
        p.waitUntilExit()
        let elapsed = Date().timeIntervalSince(start)
        #expect(p.terminationStatus == 143)
        #expect(elapsed < 5, "shutdown is bounded at 3 s; took \(elapsed) s")
    }
}
