import Foundation
import Testing
import TestSupport

/// A plugin that crashes after the old probe's stages (dlopen, init, factory, deinit): in
/// create or activate the probe now finds it; in a command the host's fatal-signal recorder
/// names it, and the next start quarantines that file and carries on with the other plugins.
/// Each test runs the real `termhost` binary on plugins compiled with cc.
@Suite struct CrashContainmentTests {
    /// Tests/Fixtures/crash-plugin.c built with `mode` as org.test.crashy (command `crashy`),
    /// beside a well-behaved fixture plugin whose command is `good`.
    struct CrashPlugin { let directory: String; let library: String }

    static func setUp(_ dir: TemporaryDirectory, mode: String) throws -> (CLI, CrashPlugin) {
        let cli = CLI(dir)
        let crashy = try crashPlugin(in: cli.plugins, mode: mode)
        try Fixtures.cPlugin(in: cli.plugins, dirName: "good", id: "org.test.good", defines: ["COMMAND_NAME=\"good\""])
        return (cli, crashy)
    }

    @discardableResult
    static func crashPlugin(in parent: String, mode: String) throws -> CrashPlugin {
        let dir = parent + "/crashy"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let lib = dir + "/libcrashy.so"
        let cc = try Shell.run("/usr/bin/cc", ["-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-pedantic",
                                               "-fPIC", "-shared", "-I", Paths.sdkInclude, "-o", lib,
                                               Paths.root + "/Tests/Fixtures/crash-plugin.c", "-D" + mode])
        guard cc.status == 0 else { throw Shell.Failure(description: "cc failed: \(cc.output)") }
        let manifest = dir + "/manifest.json"
        _ = FileManager.default.createFile(atPath: manifest, contents: Data("""
        { "id": "org.test.crashy", "version": "1.0.0", "abi": "\(Fixtures.abi)", "library": "libcrashy.so",
          "features": [ { "id": "org.test.crashy", "version": "1.0.0", "order": 100,
                          "commands": [ { "name": "crashy", "summary": "crash-containment fixture command" } ] } ] }
        """.utf8))
        return CrashPlugin(directory: dir, library: lib)
    }

    /// The other plugin still works: its command runs and exits 0.
    static func expectGoodStillRuns(_ cli: CLI) throws {
        let r = try cli.run("good")
        #expect(!r.signaled && r.status == 0, "\(r.output)")
        #expect(r.stdout == "good ran with 0 argument(s)\n")
    }

    @Test(arguments: [("CRASH_IN_CREATE", "create"), ("CRASH_IN_ACTIVATE", "activate")])
    func aCrashInCreateOrActivateIsFoundByTheProbe(mode: String, call: String) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (cli, crashy) = try Self.setUp(dir, mode: mode)
        let check = try cli.run("plugins", "check", crashy.directory)
        #expect(check.status == 1, "\(check.output)")
        #expect(check.stdout.contains("problem: probe crashed with SIGSEGV in \(call)(\"org.test.crashy\")\n"), "\(check.output)")
        // A start quarantines it and carries on: the other plugin's command runs.
        try Self.expectGoodStillRuns(cli)
        let r = try cli.run("crashy")
        #expect(!r.signaled && r.status == 1)
        #expect(r.stderr == "termhost: command 'crashy' is unavailable: plugin 'org.test.crashy' (\(crashy.directory)) was not loaded: probe crashed with SIGSEGV in \(call)(\"org.test.crashy\")\n")
        let list = try cli.run("plugins", "quarantine", "list")
        #expect(list.stdout.contains("org.test.crashy: probe crashed with SIGSEGV in \(call)(\"org.test.crashy\")"), "\(list.output)")
    }

    @Test func aCrashInACommandIsRecordedNamedAndQuarantinedOnTheNextStart() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (cli, crashy) = try Self.setUp(dir, mode: "CRASH_IN_COMMAND")
        // The probe cannot see it: create and activate are fine.
        #expect(try cli.run("plugins", "check", crashy.directory).status == 0)

        // This run dies of the signal, as before (the shell shows 139).
        let first = try cli.run("crashy")
        #expect(first.signaled && first.status == SIGSEGV, "\(first.output)")
        #expect(first.stdout == "crashy running\n")

        // The next start names the culprit and the call, and goes on without it.
        let second = try cli.run("good")
        #expect(!second.signaled && second.status == 0, "\(second.output)")
        #expect(second.stdout == "good ran with 0 argument(s)\n")
        #expect(second.stderr == "termhost: plugin 'org.test.crashy' (\(crashy.library)) crashed the previous run with SIGSEGV in run_command(\"crashy\"); quarantined until the library changes; 'termhost plugins quarantine clear org.test.crashy' lifts it\n")

        // Said once; from then on the plugin is simply quarantined.
        let third = try cli.run("crashy")
        #expect(!third.signaled && third.status == 1)
        #expect(third.stderr == "termhost: command 'crashy' is unavailable: plugin 'org.test.crashy' (\(crashy.directory)) was not loaded: crashed termhost with SIGSEGV in run_command(\"crashy\")\n")
        try Self.expectGoodStillRuns(cli)

        // doctor shows it and why, and exits 1.
        let doctor = try cli.run("doctor")
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("  - org.test.crashy 1.0.0: crashed termhost with SIGSEGV in run_command(\"crashy\"); it will be probed again when libcrashy.so or its manifest changes ('termhost plugins quarantine clear org.test.crashy' lifts it now)\n"), "\(doctor.output)")
    }

    @Test func anAbortInACommandIsNamedWithItsSignal() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (cli, crashy) = try Self.setUp(dir, mode: "ABORT_IN_COMMAND")
        let first = try cli.run("crashy")
        #expect(first.signaled && first.status == SIGABRT, "\(first.output)")
        let second = try cli.run("good")
        #expect(second.status == 0)
        #expect(second.stderr.hasPrefix("termhost: plugin 'org.test.crashy' (\(crashy.library)) crashed the previous run with SIGABRT in run_command(\"crashy\"); quarantined"), "\(second.output)")
    }

    @Test func aCrashOnAThreadThePluginStartedIsAttributedByItsCode() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (cli, crashy) = try Self.setUp(dir, mode: "CRASH_IN_THREAD")
        let first = try cli.run("crashy")
        #expect(first.signaled && first.status == SIGSEGV, "\(first.output)")
        let second = try cli.run("good")
        #expect(!second.signaled && second.status == 0)
        #expect(second.stderr == "termhost: plugin 'org.test.crashy' (\(crashy.library)) crashed the previous run with SIGSEGV in a thread it started; quarantined until the library changes; 'termhost plugins quarantine clear org.test.crashy' lifts it\n")
        #expect(try cli.run("crashy").status == 1)
    }

    @Test func quarantineListAndClear() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (cli, crashy) = try Self.setUp(dir, mode: "CRASH_IN_COMMAND")
        #expect(try cli.run("plugins", "quarantine", "list").stdout == "No plugin is quarantined.\n")
        #expect(try cli.run("crashy").signaled)

        // list reads the marker itself: no other command needs to have run in between.
        let list = try cli.run("plugins", "quarantine", "list")
        #expect(list.status == 0)
        #expect(list.stderr.contains("crashed the previous run with SIGSEGV in run_command(\"crashy\")"))
        let sha = try #require(list.stdout.split(separator: "sha256 ").last?.prefix(64))
        #expect(list.stdout.hasPrefix("PLUGIN           SINCE                    LIBRARY\norg.test.crashy  20"), "\(list.output)")
        #expect(list.stdout.contains(" UTC  \(crashy.library)\n"))
        #expect(list.stdout.contains("org.test.crashy: crashed termhost with SIGSEGV in run_command(\"crashy\") (sha256 \(sha))\n"))
        let json = try JSONSerialization.jsonObject(with: Data(try cli.run("--json", "plugins", "quarantine", "list").stdout.utf8)) as? [[String: Any]]
        #expect(json?.first?["id"] as? String == "org.test.crashy")
        #expect(json?.first?["library"] as? String == crashy.library)

        let unknown = try cli.run("plugins", "quarantine", "clear", "org.test.nosuch")
        #expect(unknown.status == 1)
        #expect(unknown.stderr == "termhost plugins quarantine clear: no quarantined plugin has the ID 'org.test.nosuch' (see 'termhost plugins quarantine list')\n")
        // A plugin that exists but is not quarantined is refused the same way.
        #expect(try cli.run("plugins", "quarantine", "clear", "org.test.good").status == 1)

        let clear = try cli.run("plugins", "quarantine", "clear", "org.test.crashy")
        #expect(clear.status == 0, "\(clear.output)")
        #expect(clear.stdout == "termhost: quarantine of plugin 'org.test.crashy' (\(crashy.library)) lifted; it is probed again on the next start\n")
        #expect(try cli.run("plugins", "quarantine", "list").stdout == "No plugin is quarantined.\n")
        // Lifted: it loads again (and, unchanged, crashes again).
        let again = try cli.run("crashy")
        #expect(again.signaled && again.status == SIGSEGV)
        #expect(again.stdout == "crashy running\n")
    }

    @Test func aLibraryReplacedAfterTheCrashIsNotQuarantined() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (cli, crashy) = try Self.setUp(dir, mode: "CRASH_IN_COMMAND")
        #expect(try cli.run("crashy").signaled)
        // The author ships a fix before the next start: that file did not crash anything.
        try Self.crashPlugin(in: cli.plugins, mode: "FIXED")
        let r = try cli.run("crashy")
        #expect(!r.signaled && r.status == 0, "\(r.output)")
        #expect(r.stderr == "termhost: plugin 'org.test.crashy' (\(crashy.library)) crashed the previous run with SIGSEGV in run_command(\"crashy\"); not quarantined: the library has changed since (or the probe cache does not know it), so it is probed again\n")
    }
}
