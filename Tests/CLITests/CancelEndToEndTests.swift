import Foundation
import Testing
import TestSupport

/// Ctrl-C, a hung shutdown and a command that runs itself, on the real binary with
/// Tests/Fixtures/cancel-plugin.c: the running command is asked to stop through
/// termhost.cancel/1 and waited for; destroy() and deinit() never run while it is inside
/// run_command(); only the feature whose shutdown() hung is named; nesting stops at 16.
@Suite struct CancelEndToEndTests {
    /// The ABI minor the SDK headers declare, for the manifest (it must match the library's).
    static var abi: String {
        let header = (try? String(contentsOfFile: Paths.sdkInclude + "/termhost/version.h", encoding: .utf8)) ?? ""
        let minor = header.split(separator: "\n").first { $0.hasPrefix("#define TERMHOST_ABI_MINOR ") }?
            .split(separator: " ").last.map(String.init) ?? "1"
        return "1." + minor
    }

    /// Compiles the fixture as plugin `id` whose commands are `<prefix>-polite` and so on.
    static func plugin(in parent: String, id: String, prefix: String, order: Int) throws {
        let dir = parent + "/" + prefix
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let cc = try Shell.run("/usr/bin/cc", ["-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-pedantic",
                                               "-fPIC", "-shared", "-I", Paths.sdkInclude, "-o", dir + "/libcancel.so",
                                               Paths.root + "/Tests/Fixtures/cancel-plugin.c",
                                               "-DPLUGIN_ID=\"\(id)\"", "-DCOMMAND_PREFIX=\"\(prefix)\"", "-DFEATURE_ORDER=\(order)"])
        guard cc.status == 0 else { throw Shell.Failure(description: "cc failed: \(cc.output)") }
        let commands = ["polite", "stubborn", "recurse", "hang-shutdown"]
            .map { #"{ "name": "\#(prefix)-\#($0)", "summary": "cancel fixture" }"# }.joined(separator: ", ")
        _ = FileManager.default.createFile(atPath: dir + "/manifest.json", contents: Data("""
        { "id": "\(id)", "version": "1.0.0", "abi": "\(abi)", "library": "libcancel.so",
          "features": [ { "id": "\(id)", "version": "1.0.0", "order": \(order), "commands": [ \(commands) ] } ] }
        """.utf8))
    }

    struct Setup {
        let dir = TemporaryDirectory()
        var cli: CLI
        var log: String { dir.path + "/calls.log" }
        init() {
            cli = CLI(dir)
            cli.extraEnvironment = ["TERMHOST_CANCEL_LOG": dir.path + "/calls.log", "TERMHOST_CANCEL_DIR": dir.path]
        }
        func exists(_ marker: String) -> Bool { FileManager.default.fileExists(atPath: dir.path + "/" + marker) }
        /// The calls the fixture saw in process `pid` (the probe's process is another), in order.
        func calls(_ pid: Int32, plugin: String = "org.test.cancel") -> [String] {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { line in
                let f = line.split(separator: " ")
                return f.count == 3 && f[1] == plugin && f[2] == "\(pid)" ? String(f[0]) : nil
            }
        }
    }

    func waitFor(_ what: String, timeout: Double = 15, _ condition: () -> Bool) -> Bool {
        if Wait.until(timeout: timeout, poll: 0.01, condition) { return true }
        Issue.record("timed out waiting for \(what)")
        return false
    }

    func waitForExit(_ p: Process, timeout: Double = 20) -> Bool {
        waitFor("the process to exit", timeout: timeout) { !p.isRunning }
    }

    @Test func ctrlCLetsAPoliteCommandCleanUpBeforeDestroyAndDeinit() throws {
        let s = Setup()
        defer { s.dir.remove() }
        try Self.plugin(in: s.cli.plugins, id: "org.test.cancel", prefix: "c", order: 10)
        let bg = try Background(Paths.termhost, ["c-polite"], environment: s.cli.environment)
        let p = bg.process
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        guard waitFor("the command to start", { s.exists("started") }) else { return }
        kill(p.processIdentifier, SIGINT)
        guard waitForExit(p) else { return }
        #expect(p.terminationStatus == 130)
        #expect(s.exists("cleaned-up"), "the command must get to clean up before the process ends")
        // shutdown() may overlap the command (entry.h, [main]); destroy() and deinit() never do.
        let calls = s.calls(p.processIdentifier)
        #expect(calls.filter { $0 != "shutdown" } == ["run_command", "cancelled", "run_command-returns", "destroy", "deinit"],
                "destroy() and deinit() only after run_command() returned: \(calls)")
        #expect(calls.filter { $0 == "shutdown" }.count == 1, "\(calls)")
        let stderr = bg.errorOutput()
        #expect(!stderr.contains("abandoned"), "\(stderr)")
    }

    @Test func aCommandThatIgnoresCtrlCIsAbandonedAndNamedWithinTheBound() throws {
        let s = Setup()
        defer { s.dir.remove() }
        try Self.plugin(in: s.cli.plugins, id: "org.test.cancel", prefix: "c", order: 10)
        let bg = try Background(Paths.termhost, ["c-stubborn"], environment: s.cli.environment)
        let p = bg.process
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        guard waitFor("the command to start", { s.exists("started") }) else { return }
        let start = Date()
        kill(p.processIdentifier, SIGINT)
        guard waitForExit(p) else { return }
        let elapsed = Date().timeIntervalSince(start)
        #expect(p.terminationStatus == 130)
        #expect(elapsed >= 3 && elapsed < 9, "3 s for the command, then a shutdown that does not hang (took \(elapsed) s)")
        #expect(bg.errorOutput().contains("termhost: command 'c-stubborn' (feature 'org.test.cancel') did not return within 3.0 s of being asked to stop; abandoned: its plugin's destroy() and deinit() are not called\n"))
        let calls = s.calls(p.processIdentifier)
        #expect(calls.contains("asked-to-stop"), "\(calls)")
        #expect(!calls.contains("destroy") && !calls.contains("deinit"), "never destroyed or deinitialized while inside run_command(): \(calls)")
    }

    @Test func aSecondCtrlCExitsAtOnce() throws {
        let s = Setup()
        defer { s.dir.remove() }
        try Self.plugin(in: s.cli.plugins, id: "org.test.cancel", prefix: "c", order: 10)
        let bg = try Background(Paths.termhost, ["c-stubborn"], environment: s.cli.environment)
        let p = bg.process
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        guard waitFor("the command to start", { s.exists("started") }) else { return }
        kill(p.processIdentifier, SIGINT)
        guard waitFor("the cancel request to reach the command", { s.calls(p.processIdentifier).contains("asked-to-stop") }) else { return }
        let start = Date()
        kill(p.processIdentifier, SIGINT)
        guard waitForExit(p) else { return }
        #expect(Date().timeIntervalSince(start) < 2.5, "the second interrupt must not wait out the 3 s bound")
        #expect(p.terminationStatus == 130)
        #expect(bg.errorOutput() == "termhost: interrupt again; exiting without waiting for plugins\n")
        #expect(!s.calls(p.processIdentifier).contains("destroy"))
    }

    @Test func aHungShutdownNamesOnlyTheFeatureThatHung() throws {
        let s = Setup()
        defer { s.dir.remove() }
        // Shutdown runs in reverse order: org.test.z, then org.test.h (hangs); org.test.a is
        // never called, and must not be blamed.
        try Self.plugin(in: s.cli.plugins, id: "org.test.a", prefix: "a", order: 10)
        try Self.plugin(in: s.cli.plugins, id: "org.test.h", prefix: "h", order: 20)
        try Self.plugin(in: s.cli.plugins, id: "org.test.z", prefix: "z", order: 30)
        let r = try s.cli.run("h-hang-shutdown")
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stderr.contains("termhost: feature 'org.test.h' did not return from shutdown() within 3.0 s; exiting without it (1 feature after it was not shut down)\n"), "\(r.stderr)")
        #expect(!r.stderr.contains("org.test.a"), "a feature whose shutdown() was never called is not to blame: \(r.stderr)")
        #expect(!r.stderr.contains("org.test.z"), "\(r.stderr)")
    }

    @Test func aSwiftCommandHearsCtrlCThroughTheSDK() throws {
        let s = Setup()
        defer { s.dir.remove() }
        try Fixtures.swiftServices(in: s.cli.plugins)
        let bg = try Background(Paths.termhost, ["swsvc", "cancel"], environment: s.cli.environment)
        let p = bg.process
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        #expect(bg.firstLine() == "waiting\n")
        kill(p.processIdentifier, SIGINT)
        guard waitForExit(p) else { return }
        #expect(p.terminationStatus == 130)
        #expect(String(decoding: bg.stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "cancelled in scene of the command\n")
    }

    @Test func aCommandRunningItselfStopsAtSixteenLevels() throws {
        let s = Setup()
        defer { s.dir.remove() }
        try Self.plugin(in: s.cli.plugins, id: "org.test.cancel", prefix: "c", order: 10)
        let r = try s.cli.run("c-recurse")
        #expect(r.status == 3, "the fixture ends its chain with 3 when refused; the host's own status is the command's: \(r.output)")
        #expect(r.stdout == (1...16).map { "level \($0)\n" }.joined())
        #expect(r.stderr.contains("recurse: level 16: run: command 'c-recurse' refused: commands nested 16 deep already (a command running commands, itself among them); the limit is 16 levels (code 10)\n"), "\(r.stderr)")
    }
}
