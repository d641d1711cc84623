import Foundation
import Testing
import TestSupport

/// NOTES §5's Unix mapping, on the real binary: SIGTSTP backgrounds the scene and stops the
/// process, SIGCONT brings it back, SIGHUP detaches the scene and exits 129.
@Suite struct SignalEndToEndTests {
    func waitForLine(_ log: String, _ line: String) -> Bool {
        Wait.until {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").contains(Substring(line))
        }
    }

    func state(_ pid: Int32) -> Character? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(close, offsetBy: 2)]
    }

    @Test func stopContinueAndHangupFollowTheLifecycle() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var cli = CLI(dir)
        let log = dir.path + "/callbacks.log"
        cli.extraEnvironment = ["TERMHOST_FIXTURE_LOG": log]
        try Fixtures.cPlugin(in: cli.plugins, dirName: "s", id: "org.test.s", defines: ["HANG_IN_COMMAND"])
        let bg = try Background(Paths.termhost, ["fixture"], environment: cli.environment)
        let p = bg.process
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        #expect(waitForLine(log, "scene_attached org.test.s"))

        kill(p.processIdentifier, SIGTSTP)
        #expect(waitForLine(log, "background org.test.s"))
        #expect(Wait.until { state(p.processIdentifier) == "T" }, "SIGTSTP must really stop the process after backgrounding the scene")

        kill(p.processIdentifier, SIGCONT)
        #expect(waitForLine(log, "foreground org.test.s"))

        kill(p.processIdentifier, SIGHUP)
        #expect(Wait.until { !p.isRunning })
        #expect(p.terminationStatus == 129)
        #expect(waitForLine(log, "scene_detached org.test.s"))
        #expect(waitForLine(log, "shutdown org.test.s"))
    }

    @Test func aWorkspaceScopeCommandGetsAWorkspaceOfItsOwn() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var cli = CLI(dir)
        let log = dir.path + "/callbacks.log"
        cli.extraEnvironment = ["TERMHOST_FIXTURE_LOG": log]
        try Fixtures.cPlugin(in: cli.plugins, dirName: "w", id: "org.test.w", defines: ["FEATURE_SCOPE=TERMHOST_SCOPE_WORKSPACE"],
                             extraFeatureJSON: #", "scope": "workspace""#)
        // The probe runs the feature once too (create, activate, shutdown, destroy); probed
        // here first, and its lines set aside, so that only the command's own run is counted.
        try cli.run("doctor")
        try? FileManager.default.removeItem(atPath: log)
        let r = try cli.run("fixture", "prod")
        #expect(r.status == 0 && r.stdout == "fixture ran with 1 argument(s) [prod]\n")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("init ") }
        #expect(lines == ["activate org.test.w", "shutdown org.test.w", "destroy org.test.w"])
    }

    @Test func aPolicyTheUserCannotReachStopsTheHost() throws {
        guard getuid() == 0 else { return }   // needs root to set up a directory the user cannot enter
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cli = CLI(dir)
        try Fixtures.helloC(in: cli.plugins)
        var env = cli.environment
        let etc = dir.sub("etc-termhost")
        let policy = dir.write("etc-termhost/policy.json", #"{ "disable": ["org.termhost.examples.hello-c"] }"#)
        env["TERMHOST_POLICY"] = policy
        _ = try Shell.run("/bin/chmod", ["-R", "a+rwX", dir.path])
        chmod(etc, 0o700)
        let r = try Shell.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", Paths.termhost, "hello"], environment: env)
        #expect(r.status == 3, "\(r.output)")
        #expect(r.stderr == "cannot read \(policy): Permission denied\ntermhost: refusing to start until the configuration above is fixed\n")
    }
}
