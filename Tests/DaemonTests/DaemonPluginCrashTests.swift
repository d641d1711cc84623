import Foundation
import Glibc
import Testing
import TestSupport

/// A plugin that crashes inside the daemon takes the daemon down, as it would a CLI process; the
/// client is told, and the next daemon (systemd restarts it) quarantines the plugin and serves
/// the others.
@Suite struct DaemonPluginCrashTests {
    @Test func aPluginCrashingTheDaemonIsQuarantinedByTheNextOne() throws {
        let daemon = DaemonHarness()
        defer { daemon.stop(); daemon.remove() }
        let plugins = daemon.dir.sub("plugins")
        let crashy = plugins + "/crashy"
        try FileManager.default.createDirectory(atPath: crashy, withIntermediateDirectories: true)
        let cc = try Shell.run("/usr/bin/cc", ["-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-pedantic",
                                               "-fPIC", "-shared", "-I", Paths.sdkInclude, "-o", crashy + "/libcrashy.so",
                                               Paths.root + "/Tests/Fixtures/crash-plugin.c", "-DCRASH_IN_COMMAND"])
        #expect(cc.status == 0, "\(cc.output)")
        _ = daemon.dir.write("plugins/crashy/manifest.json", """
        { "id": "org.test.crashy", "version": "1.0.0", "abi": "\(Fixtures.abi)", "library": "libcrashy.so",
          "features": [ { "id": "org.test.crashy", "version": "1.0.0", "order": 100,
                          "commands": [ { "name": "crashy", "summary": "crash-containment fixture command" } ] } ] }
        """)
        try Fixtures.cPlugin(in: plugins, dirName: "good", id: "org.test.good", defines: ["COMMAND_NAME=\"good\""])
        try daemon.start()

        let crashed = try daemon.run("crashy")
        #expect(crashed.status == 1 && crashed.stderr.contains("the daemon went away"), "\(crashed.output)")
        #expect(Wait.until(timeout: 30) { daemon.ended }, "the crash took the daemon down")

        try daemon.start()
        #expect(daemon.log.contains("plugin 'org.test.crashy'") && daemon.log.contains("crashed the previous run with SIGSEGV in run_command(\"crashy\"); quarantined"),
                "\(daemon.log)")
        let good = try daemon.run("good")
        #expect(good.status == 0 && good.stdout == "good ran with 0 argument(s)\n", "\(good.output)")
        #expect(daemon.log.contains("runs 'good' in scene"), "the new daemon ran it: \(daemon.log)")
        let refused = try daemon.run("crashy")
        #expect(refused.status == 1 && refused.stderr.contains("was not loaded: crashed termhost with SIGSEGV in run_command(\"crashy\")"), "\(refused.output)")
    }
}
