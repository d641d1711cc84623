import Foundation
@testable import MetricsCore
import Testing
import TestSupport

/// The procfs parsers and computations against recorded output of the real sampling loop
/// (dash and BusyBox on this machine) and hand-made edge cases.
@Suite struct ProcfsParserTests {
    @Test func aRecordedNormalHostGivesEverySectionAndSaneValues() throws {
        let (samples, parser) = Fixture.samples("normal-host.txt")
        try #require(samples.count == 2)
        #expect(parser.info.pageSize == 4096 && parser.info.clockTicks == 100)
        #expect(parser.info.physicalInterfaces == ["eth0"])
        let raw = samples[1]
        let s = Compute.snapshot(previous: samples[0], current: raw, info: parser.info)
        let cpu = try #require(s.cpu?.total)
        #expect(cpu >= 0 && cpu <= 100)
        #expect(s.cpu?.cores.count == 2 && s.cpu!.cores.allSatisfy { $0.percent != nil })
        // used = MemTotal - MemAvailable, exactly, in bytes.
        let mem = try #require(raw.memory)
        #expect(s.memory?.usedBytes == Double(mem.total! - mem.available!))
        #expect(s.memory?.totalBytes == Double(mem.total!) && mem.total! % 1024 == 0)
        // Physical interfaces only: eth0 has a device in /sys, lo and ifb* do not.
        #expect(s.network?.map(\.name) == ["eth0"])
        #expect(s.network?.first?.receiveBytesPerSecond != nil)
        // Whole disks only: no loop devices.
        #expect(s.disks?.map(\.name) == ["vda"], "zram0 and loop devices are not disks")
        #expect(raw.disks?["loop0"] != nil && raw.disks?["zram0"] != nil, "they were parsed, then left out")
        let procs = try #require(s.processes)
        #expect(procs.count > 20)
        #expect(procs.allSatisfy { $0.cpuPercent == nil || ($0.cpuPercent! >= 0 && $0.cpuPercent! <= 200) })
        #expect(procs.filter { $0.cpuPercent != nil }.count > procs.count / 2, "processes seen twice have a CPU %")
        let pid1 = try #require(raw.processes?.first { $0.pid == 1 })
        #expect(procs.first { $0.pid == 1 }?.rssBytes == Double(pid1.residentPages! * 4096))
        #expect(s.filesystems?.contains { $0.mount == "/" } == true)
        #expect(s.filesystems?.contains { $0.device == "tmpfs" } == false)
    }

    @Test func recordedBusyBoxOutputParsesTheSameWay() throws {
        let (samples, parser) = Fixture.samples("busybox.txt")
        try #require(samples.count == 2)
        #expect(parser.info.pageSize == 4096, "BusyBox has no getconf: the loop falls back to 4096")
        let s = Compute.snapshot(previous: samples[0], current: samples[1], info: parser.info)
        #expect(s.cpu?.total != nil && s.memory?.usedBytes != nil && s.load != nil && s.uptime != nil)
        #expect(s.network?.first?.transmitBytesPerSecond != nil)
        #expect(s.processes == nil && s.filesystems == nil, "details were off")
    }

    static let shells = [["/usr/bin/dash"], ["/usr/bin/busybox", "sh"]]

    @Test func theLoopRunsUnderDashAndBusyBoxAndLeavesNothingBehindOnEndOfInput() throws {
        for shell in Self.shells {
            // Scripts/setup.sh installs both; a missing one fails here rather than passing untested.
            try #require(FileManager.default.fileExists(atPath: shell[0]), "\(shell[0]) is missing: run Scripts/setup.sh")
            // Interval 30: after the first sample the loop sits in `sleep 30`. stdin closes
            // then: the watcher kills the loop's whole process group (SIGKILL), so neither the
            // shell nor its sleep outlives it.
            let r = try LoopRun.run(shell, args: ["30", "1", "n0nce"]) { Self.sampleCount($0, nonce: "n0nce") >= 1 }
            var parser = FrameParser(nonce: "n0nce")
            let samples = parser.feed(Array(r.stdout.utf8))
            #expect(samples.count == 1, "\(shell): \(r.stdout.prefix(300))")
            #expect(samples.allSatisfy { $0.cpu != nil && $0.processes?.isEmpty == false && $0.blockDevices != nil }, "\(shell)")
            #expect(parser.info.pageSize == UInt64(sysconf(Int32(_SC_PAGESIZE))))
            #expect(r.seconds < 5, "\(shell): ended on end of input, not after its sleep")
            #expect(r.leftovers.isEmpty, "\(shell): \(r.leftovers)")
        }
    }

    /// Complete samples in a loop's output so far.
    static func sampleCount(_ output: String, nonce: String) -> Int {
        var parser = FrameParser(nonce: nonce)
        return parser.feed(Array(output.utf8)).count
    }

    /// A bin directory with only what the loop needs, a `df` that hangs (a dead NFS mount),
    /// and `timeout` from `timeoutFrom` (nil: none).
    static func hungDfBin(_ dir: TemporaryDirectory, timeoutFrom: String?) throws -> String {
        let bin = dir.sub("bin-\(timeoutFrom.map { ($0 as NSString).lastPathComponent } ?? "none")")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        for tool in ["head", "sleep", "getconf", "cat"] {
            try FileManager.default.createSymbolicLink(atPath: bin + "/" + tool, withDestinationPath: "/usr/bin/" + tool)
        }
        if let timeoutFrom { try FileManager.default.createSymbolicLink(atPath: bin + "/timeout", withDestinationPath: timeoutFrom) }
        _ = FileManager.default.createFile(atPath: bin + "/df", contents: Data("#!/bin/sh\nexec /usr/bin/sleep 100\n".utf8),
                                           attributes: [.posixPermissions: 0o755])
        return bin
    }

    @Test func aHungDfIsCutOffByTimeoutOrSkippedAndBaseMetricsGoOn() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // GNU timeout (-k), BusyBox's, and none at all.
        for (shell, timeout) in [(["/usr/bin/dash"], "/usr/bin/timeout"), (["/usr/bin/busybox", "sh"], "/usr/bin/busybox"),
                                 (["/usr/bin/dash"], nil)] {
            let bin = try Self.hungDfBin(dir, timeoutFrom: timeout)
            // df hangs: with timeout each sample waits 2 s for it; without, it is skipped.
            let r = try LoopRun.run(shell, args: ["1", "1", "abc"], path: bin) { Self.sampleCount($0, nonce: "abc") >= (timeout == nil ? 3 : 1) }
            var parser = FrameParser(nonce: "abc")
            let samples = parser.feed(Array(r.stdout.utf8))
            let label = "\(shell) timeout: \(timeout ?? "none")"
            #expect(samples.count >= (timeout == nil ? 3 : 1), "\(label): \(samples.count) samples")
            #expect(samples.allSatisfy { $0.cpu != nil && $0.memory != nil && $0.processes != nil }, "\(label)")
            if timeout == nil { #expect(samples.allSatisfy { $0.filesystems == nil }, "no timeout: df is skipped") }
            else { #expect(samples.allSatisfy { $0.filesystems == [] }, "\(label): df ran and was cut off") }
            #expect(r.leftovers.isEmpty, "\(label): \(r.leftovers)")
        }
    }

    @Test func aContainerWithMissingFilesKeepsTheOtherSectionsAndUnknownsStayNull() throws {
        let frame = """
        @@termhost-metrics 1 4096 100
        @@phys /sys/class/net/*/device
        @@sample
        ==> uptime <==
        100.00 150.00
        ==> stat <==
        cpu  100 0 100 800 0 0 0 0 0 0
        cpu0 100 0 100 800 0 0 0 0 0 0
        ==> meminfo <==
        MemTotal:        1000 kB
        MemFree:          500 kB
        ==> loadavg <==
        0.10 0.20 0.30 1/10 99
        @@end
        @@sample
        ==> uptime <==
        101.00 151.00
        ==> stat <==
        cpu  150 0 150 900 0 0 0 0 0 0
        cpu0 150 0 150 900 0 0 0 0 0 0
        ==> meminfo <==
        MemTotal:        1000 kB
        MemFree:          400 kB
        ==> loadavg <==
        0.10 0.20 0.30 1/10 99
        @@end

        """
        var parser = FrameParser()
        let samples = parser.feed(Array(frame.utf8))
        try #require(samples.count == 2)
        #expect(parser.info.physicalInterfaces == [], "an unmatched glob means no /sys")
        let s = Compute.snapshot(previous: samples[0], current: samples[1], info: parser.info)
        #expect(s.cpu?.total == 50)
        #expect(s.memory?.totalBytes == 1_024_000)
        #expect(s.memory?.usedBytes == nil, "no MemAvailable: unknown, not guessed and not 0")
        #expect(s.network == nil && s.disks == nil)
        var report = HostReport(host: "c1", state: .live, interval: 1)
        report.apply(s, at: 1_000)
        let json = SnapshotJSON.render(report, now: 1_000.5).text
        #expect(json.contains("\"usedBytes\":null"))
        #expect(json.contains("\"network\":null,\"disks\":null"))
        #expect(json.contains("\"cpu\":{\"at\":\"1970-01-01T00:16:40.000Z\",\"ageSeconds\":0.5,\"stale\":false,\"totalPercent\":50"))
    }

    @Test func counterResetsWrapsAndRebootsAreUnknownNeverZeroOrNegative() {
        var a = RawSample(), b = RawSample()
        a.uptime = 100; b.uptime = 102
        a.interfaces = ["eth0": NetCounters(rxBytes: 5_000, txBytes: 1_000)]
        b.interfaces = ["eth0": NetCounters(rxBytes: 100, txBytes: 3_000)]   // rx reset
        a.disks = ["sda": DiskCounters(readBytes: 1024, writtenBytes: 0)]
        b.disks = ["sda": DiskCounters(readBytes: 3072, writtenBytes: 0)]
        a.cpu = CPUStat.parse("cpu 500 0 500 1000 0 0 0 0 0 0\ncpu0 500 0 500 1000\n")
        b.cpu = CPUStat.parse("cpu 10 0 10 20 0 0 0 0 0 0\ncpu0 10 0 10 20\n")   // counters restarted
        var info = RemoteInfo()
        info.physicalInterfaces = ["eth0"]
        let s = Compute.snapshot(previous: a, current: b, info: info)
        #expect(s.network?.first?.receiveBytesPerSecond == nil)
        #expect(s.network?.first?.transmitBytesPerSecond == 1_000)
        #expect(s.disks?.first?.readBytesPerSecond == 1024, "rates use remote uptime: 2048 bytes over 2 s")
        #expect(s.cpu?.total == nil && s.cpu?.cores.first?.percent == nil)
        // A reboot: uptime went back, so even counters that grew are not trusted.
        b.uptime = 5
        b.interfaces = ["eth0": NetCounters(rxBytes: 9_000, txBytes: 9_000)]
        let r = Compute.snapshot(previous: a, current: b, info: info)
        #expect(r.network?.first?.receiveBytesPerSecond == nil && r.network?.first?.transmitBytesPerSecond == nil)
        #expect(r.disks?.first?.readBytesPerSecond == nil)
        // The same reading twice: no time passed.
        #expect(Compute.rate(1, 2, 0) == nil)
    }

    @Test func a64CoreStatGivesEachCoreItsOwnUsage() throws {
        let a = try #require(CPUStat.parse(Fixture.text("stat-64core-a.txt")))
        let b = try #require(CPUStat.parse(Fixture.text("stat-64core-b.txt")))
        #expect(a.cores.count == 64 && Set(a.cores.keys) == Set(0..<64))
        for c in 0..<64 {
            let u = try #require(CPUTimes.usage(from: a.cores[c]!, to: b.cores[c]!))
            #expect(abs(u - Double(c % 5 + 1) * 20) < 1e-9, "core \(c)")
        }
        let total = try #require(CPUTimes.usage(from: a.total, to: b.total))
        #expect(total > 20 && total < 100)
    }

    @Test func theHtopFormulaCountsGuestTimeOnceAndIOWaitAsIdle() throws {
        // user includes guest (kernel accounting): htop subtracts it, then adds it back as virtual time.
        let a = try #require(CPUStat.parse("cpu 1000 100 500 8000 400 0 0 0 200 0\n")).total
        let b = try #require(CPUStat.parse("cpu 1600 100 700 8600 600 50 50 0 400 0\n")).total
        // Δ: user 600 (guest 200 inside), system 200, idle 600, iowait 200, irq 50, softirq 50.
        // total = 600 + 200 + 50 + 50 + 600 + 200 = 1700; idle all = 800; busy = 900.
        #expect(try #require(CPUTimes.usage(from: a, to: b)) == 900.0 / 1700.0 * 100)
    }

    @Test func malformedAndTruncatedInputIsSkippedNeverTrusted() {
        #expect(CPUStat.parse("cpu 1 2\nbogus\n") == nil, "fewer than four columns")
        #expect(CPUStat.parse("cpu 1 2 3 x 5\n") == nil)
        #expect(CPUStat.parse("cpu 1 2 3 4\ncpu1 9 9\n")?.cores.isEmpty == true, "a truncated core line is dropped")
        #expect(MemInfo.parse("MemTotal: lots kB\n") == nil)
        #expect(LoadAvg.parse("0.1 -0.2 0.3") == nil && LoadAvg.parse("") == nil)
        #expect(Uptime.parse("nan 1") == nil && Uptime.parse("inf 1") == nil)
        #expect(NetDev.parse("Inter-|   Receive\n face |bytes\n  eth0: 12 3\n") == nil)
        #expect(DiskStats.parse("8 0 sda 1 2 3\n") == nil)
        // comm with spaces and parentheses: from the first "(" to the last ")".
        let stat = "42 (a) (b c)) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 555 1000 50 18446744073709551615"
        let p = ProcessCounters.parseStat(stat)
        #expect(p?.name == "a) (b c)" && p?.cpuTicks == 10 && p?.startTicks == 555 && p?.state == "S")
        #expect(ProcessCounters.parseStat("42 (trunc") == nil)
        // A frame cut off before @@end yields nothing; garbage and invalid UTF-8 neither crash nor count.
        var parser = FrameParser()
        var bytes = Array("@@sample\n==> uptime <==\n12.5 3\n==> stat <==\ncpu 1 2 3 4\n".utf8)
        bytes += [0xff, 0xfe, 0x0a, 0x00, 0x0a]
        #expect(parser.feed(bytes).isEmpty)
        #expect(parser.feed(Array("random\n==> x <==\n@@end\n".utf8)).count == 1, "only a frame started by @@sample ends here")
        // Random bytes (no newline, so no line can be a marker) then a real frame: the noise
        // is skipped and the frame after it parses exactly.
        for nonce in ["", "n0nce"] {
            var fresh = FrameParser(nonce: nonce)
            let noise = (0..<100_000).map { _ in UInt8.random(in: 0...255) }.map { $0 == 10 ? 32 : $0 }
            let m = nonce.isEmpty ? "" : " " + nonce
            let frame = "\n@@sample\(m)\n==> uptime <==\n77.5 1\n@@base\(m)\n@@end\(m)\n"
            let got = fresh.feed(noise + Array(frame.utf8) + noise)
            #expect(got.count == 1 && got.first?.uptime == 77.5, "nonce '\(nonce)'")
        }
    }

    @Test func nvidiaSMIXMLGivesPerGPUValuesAndNAIsUnknown() {
        let gpus = NvidiaSMI.parse(Fixture.text("nvidia-smi.xml"))
        #expect(gpus.count == 2)
        #expect(gpus.first == GPU(name: "NVIDIA A100-SXM4-40GB", utilizationPercent: 37, memoryUsedBytes: 1024 * 1_048_576,
                                  memoryTotalBytes: 40960 * 1_048_576, temperatureCelsius: 41))
        #expect(gpus.last?.utilizationPercent == nil && gpus.last?.memoryUsedBytes == nil && gpus.last?.temperatureCelsius == nil)
        // A GPU section that failed (timeout killed nvidia-smi: empty) leaves the base metrics alone.
        var parser = FrameParser()
        let s = parser.feed(Array("@@sample\n==> uptime <==\n5.0 1\n@@gpu\n@@end\n".utf8))
        #expect(s.first?.uptime == 5 && s.first?.gpus == [])
    }

    @Test func anExplicitInterfaceSelectionOverridesThePhysicalDefault() {
        let (samples, parser) = Fixture.samples("normal-host.txt")
        let s = Compute.snapshot(previous: samples[0], current: samples[1], info: parser.info, interfaces: ["lo", "missing0"])
        #expect(s.network?.map(\.name) == ["lo", "missing0"])
        #expect(s.network?.first?.receiveBytesPerSecond != nil)
        #expect(s.network?.last?.receiveBytesPerSecond == nil, "an interface that is not there is unknown, not 0")
        #expect(NetDev.defaultSelection(["lo", "docker0", "veth12", "eth0"], physical: nil) == ["eth0"], "no /sys: names decide")
    }

    @Test func snapshotJSONUsesNullForNonFiniteAndCapsProcessesAt20() {
        var s = Snapshot()
        s.uptime = 10
        s.load = Snapshot.Load(one: .nan, five: .infinity, fifteen: 1, running: nil, tasks: nil)
        s.processes = (1...50).map { Snapshot.Process(pid: $0, startTicks: 1, name: "p\($0)", state: "S", cpuPercent: Double($0), rssBytes: nil) }
        var r = HostReport(host: "h", state: .live, interval: 1)
        r.apply(s, at: 100)
        let json = SnapshotJSON.render(r, now: 110).text
        #expect(json.contains("\"load\":{\"at\":\"1970-01-01T00:01:40.000Z\",\"ageSeconds\":10,\"stale\":true,\"one\":null,\"five\":null,\"fifteen\":1"))
        #expect(json.components(separatedBy: "\"pid\":").count - 1 == 20)
        #expect(json.contains("\"count\":50"))
        #expect(!json.contains("nan") && !json.contains("inf"))
    }

    @Test func prometheusRenderingPassesTheStrictParserAndLeavesUnknownsOut() throws {
        var s = Snapshot()
        s.uptime = 10
        s.cpu = Snapshot.CPU(total: 25, cores: [(0, 50), (1, nil)])
        s.network = [Snapshot.InterfaceRate(name: "we\"ird\\if", receiveBytesPerSecond: 10, transmitBytesPerSecond: nil)]
        var r = HostReport(host: "h1", state: .live, interval: 1)
        r.apply(s, at: 100)
        let text = Prometheus.render([r, HostReport(host: "h2", state: .paused, interval: 1)], now: 101)
        let parsed = try PrometheusText.parse(text)
        #expect(parsed.value("termhost_cpu_usage_ratio", ["host": "h1"]) == 0.25)
        #expect(parsed.value("termhost_cpu_core_usage_ratio", ["host": "h1", "core": "0"]) == 0.5)
        #expect(parsed.value("termhost_cpu_core_usage_ratio", ["host": "h1", "core": "1"]) == nil)
        #expect(parsed.value("termhost_network_receive_bytes_per_second", ["host": "h1", "interface": "we\"ird\\if"]) == 10)
        #expect(parsed.value("termhost_metrics_up", ["host": "h2"]) == 0)
        #expect(parsed.value("termhost_metrics_state", ["host": "h2", "state": "paused"]) == 1)
        #expect(parsed.value("termhost_cpu_usage_ratio", ["host": "h2"]) == nil)
        // The strict parser does catch what it must.
        #expect(throws: PrometheusText.Invalid.self) { try PrometheusText.parse("x 1\n") }
        #expect(throws: PrometheusText.Invalid.self) { try PrometheusText.parse("# HELP x y\n# TYPE x gauge\nx{a=\"1} 1\n") }
        #expect(throws: PrometheusText.Invalid.self) { try PrometheusText.parse("# HELP x y\n# TYPE x gauge\nx 1\nx 2\n") }
        #expect(throws: PrometheusText.Invalid.self) { try PrometheusText.parse("# HELP x y\n# TYPE x gauge\nx 1") }
    }
}
