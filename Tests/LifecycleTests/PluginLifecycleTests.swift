import Foundation
import Testing
import TermhostLifecycle
import TermhostLoader
import TermhostRuntime
import TestSupport

/// The lifecycle rules with real plugins, dlopen'd into this process.
@Suite(.serialized) struct PluginLifecycleTests {
    func start(_ dir: TemporaryDirectory, bound: Double = 1) throws -> HostRuntime {
        var o = RuntimeOptions()
        o.searchPath = PluginSearchPath(entries: [.init(directory: dir.path + "/plugins", origin: .environment)])
        o.paths = .under(dir.path)
        o.probe = ProbeRunner(executable: Paths.probe, timeout: 5)
        o.logLevel = .error
        o.shutdownBound = bound
        return try HostRuntime.start(o)
    }

    @Test func pluginCallbacksFollowTheLifecycleAndShutdownRunsInReverseOrder() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let log = dir.path + "/callbacks.log"
        _ = dir.write("policy.json", """
        { "settings": { "org.test.first": { "log": "\(log)" }, "org.test.second": { "log": "\(log)" }, "org.test.ws": { "log": "\(log)" } } }
        """)
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "first", id: "org.test.first", defines: ["FEATURE_ORDER=1", "COMMAND_NAME=\"first\""])
        try Fixtures.cPlugin(in: dir.path + "/plugins", dirName: "second", id: "org.test.second", defines: ["FEATURE_ORDER=2", "COMMAND_NAME=\"second\""])
        try Fixtures.cPlugin(in: dir.path + "/plugins", dirName: "ws", id: "org.test.ws",
                             defines: ["FEATURE_ORDER=3", "COMMAND_NAME=\"ws\"", "FEATURE_SCOPE=TERMHOST_SCOPE_WORKSPACE"],
                             extraFeatureJSON: #", "scope": "workspace""#)
        // The probe ran init in a child; only what the host itself does is logged from here on.
        try? FileManager.default.removeItem(atPath: log)
        let runtime = try start(dir)
        let scene = runtime.lifecycle.attachScene(hasTerminal: false)
        _ = runtime.lifecycle.openWorkspace(in: scene)
        runtime.lifecycle.setScenePhase(scene, .background)
        runtime.lifecycle.expire()
        runtime.lifecycle.setScenePhase(scene, .active)
        runtime.lifecycle.detachScene(scene)
        let outcome = runtime.shutdown()
        #expect(!outcome.boundExpired)
        // init() runs first (the probe child has no such setting, so only the host's show).
        let all = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(all.filter { $0.hasPrefix("init ") }.count == 3)
        let lines = all.filter { !$0.hasPrefix("init ") }
        #expect(lines == [
            "activate org.test.first", "activate org.test.second",
            "scene_attached org.test.first", "scene_attached org.test.second",
            "activate org.test.ws",
            "background org.test.first", "background org.test.second", "background org.test.ws",
            "expire org.test.first", "expire org.test.second", "expire org.test.ws",
            "foreground org.test.first", "foreground org.test.second", "foreground org.test.ws",
            "shutdown org.test.ws", "destroy org.test.ws",
            "scene_detached org.test.first", "scene_detached org.test.second",
            "shutdown org.test.second", "shutdown org.test.first",
            "destroy org.test.second", "destroy org.test.first",
        ])
    }

    @Test func aPluginHangingInShutdownDoesNotHoldTheHostPastTheBound() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try Fixtures.cPlugin(in: dir.sub("plugins"), dirName: "hung", id: "org.test.hung", defines: ["HANG_IN_SHUTDOWN"])
        let runtime = try start(dir, bound: 0.5)
        let start = Date()
        let outcome = runtime.shutdown()
        let elapsed = Date().timeIntervalSince(start)
        #expect(outcome.boundExpired && outcome.abandoned == ["org.test.hung"])
        #expect(elapsed < 3, "bounded at 0.5 s (plus scheduling slack)")
        #expect(runtime.shutdown() == outcome)
    }
}
