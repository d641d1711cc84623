import Foundation
@testable import MetricsCore
import Testing
import TestSupport

/// The Metrics plugin, really dlopen'd by the `termhost` binary, sampling this machine through
/// the fake transport (Tests/Fixtures/FakeTransport): the sampling loop runs here through
/// open_exec, with no SSH in between, so values are checked against our own /proc. What is
/// about SSH (credentials, host keys, a remote loop's end) stays in MetricsEndToEndTests.
@Suite struct MetricsThroughFakeTransportTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func showJSONIsLiveAndConsistentWithLocalProcfs() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let h = try FakeTransportHarness.metrics(dir: dir)
        // A saved interval of 40 s: show still samples every second (two samples within its 30 s).
        try h.termhost(["metrics", "add", h.target, "--interval", "40"])
        let started = Date()
        let r = try h.termhost(["--json", "metrics", "show", h.target])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Date().timeIntervalSince(started) < 20)
        let j = try Self.json(r.stdout)
        #expect(j["state"] as? String == "live" && j["reason"] is NSNull)
        let memory = try #require(j["memory"] as? [String: Any])
        #expect(memory["totalBytes"] as? Double == Local.memTotalBytes)
        let used = try #require(memory["usedBytes"] as? Double)
        #expect(used > 0 && used < Local.memTotalBytes)
        let cpu = try #require(j["cpu"] as? [String: Any])
        let total = try #require(cpu["totalPercent"] as? Double)
        #expect(total >= 0 && total <= 100)
        // Exact, not bounds: the same machine's /proc.
        #expect((cpu["cores"] as? [[String: Any]])?.compactMap { $0["core"] as? Int } == Array(0..<Local.coreCount))
        #expect(memory["swapTotalBytes"] as? Double == Double(MemInfo.parse(Local.read("/proc/meminfo"))!.swapTotal!))
        #expect(cpu["stale"] as? Bool == false && (cpu["ageSeconds"] as? Double ?? 99) < 5)
        let uptime = try #require((j["uptime"] as? [String: Any])?["seconds"] as? Double)
        #expect(abs(uptime - Local.uptime) < 10)
        let interfaces = try #require((j["network"] as? [String: Any])?["interfaces"] as? [[String: Any]])
        let names = Set(interfaces.compactMap { $0["name"] as? String })
        #expect(!names.isEmpty && names.isSubset(of: Local.interfaces) && !names.contains("lo"))
        let processes = try #require(j["processes"] as? [String: Any])
        let top = try #require(processes["top"] as? [[String: Any]])
        #expect(top.count == min(20, processes["count"] as? Int ?? 0) && !top.isEmpty)
        #expect(top.allSatisfy { $0["pid"] is Int && $0["name"] is String && $0["startTicks"] is Int })
        #expect(top.allSatisfy { ($0["rssBytes"] as? Double).map { $0 >= 0 } ?? ($0["rssBytes"] is NSNull) })
        // The fake closes what its connection ran when the command closes it.
        #expect(Wait.until(poll: 0.1) { Local.samplerLoops(home: h.home) == 0 }, "the loop ends with the command")
    }
}

extension FakeTransportHarness {
    /// The fake transport with the Metrics plugin beside it.
    static func metrics(dir: TemporaryDirectory) throws -> FakeTransportHarness {
        let h = try FakeTransportHarness(dir: dir)
        _ = try Fixtures.bundle("libMetricsPlugin.so", as: "org.termhost.metrics", in: h.plugins)
        return h
    }
}

extension Local {
    /// Sampling loops running here whose HOME is `home` (a test's scratch home: the fake
    /// transport runs them with the environment of the `termhost` that opened the connection).
    static func samplerLoops(home: String) -> Int {
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int($0) }
        return pids.filter { pid in
            read("/proc/\(pid)/cmdline").contains(SamplerScript.processName) && !isZombie(pid)
                && read("/proc/\(pid)/environ").split(separator: "\0").contains(Substring("HOME=" + home))
        }.count
    }
}
