import Foundation
@testable import MetricsCore
import Testing
import TestSupport

/// Frame markers with the run's nonce, the base/details split, disk selection, failure
/// reasons, the Prometheus export rules and terminal text: hand-made inputs with exact answers.
@Suite struct FramingAndSelectionTests {
    static let nonce = "0123abcdef456789"

    /// One frame of the current loop's shape.
    static func frame(uptime: Double, cpu: String = "cpu 100 0 100 800 0 0 0 0 0 0", details: String = "") -> String {
        """
        @@sample \(nonce)
        ==> uptime <==
        \(uptime) 1.00
        ==> stat <==
        \(cpu)
        ==> meminfo <==
        MemTotal:        2048 kB
        MemAvailable:    1024 kB
        @@blocks \(nonce)
        /sys/block/nbd1 /sys/block/nbd10 /sys/block/nvme0n1 /sys/block/nvme0n10 /sys/block/md0 /sys/block/sda
        @@base \(nonce)
        \(details)@@end \(nonce)

        """
    }

    @Test func remoteTextThatLooksLikeAMarkerNeitherEndsNorStartsASection() throws {
        var parser = FrameParser(nonce: Self.nonce)
        // A process whose comm is "x\n@@end" (and one naming the frame-end marker without the
        // nonce) sits in the process section: the frame goes on, every section is kept.
        let details = """
        @@procs \(Self.nonce)
        ==> 42/stat <==
        42 (x
        @@end
        @@end 0000000000000000
        @@sample
        ==> 43/stat <==
        43 (y) S 1 43 43 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 555 1000 50 0

        """
        let samples = parser.feed(Array(("@@termhost-metrics 2 4096 100 \(Self.nonce)\n" + Self.frame(uptime: 10, details: details)).utf8))
        try #require(samples.count == 1)
        #expect(samples[0].uptime == 10 && samples[0].memory?.total == 2_097_152 && samples[0].cpu != nil)
        #expect(samples[0].processes?.map(\.pid) == [43])
        // Without the nonce the fake "@@end" would have ended the frame before pid 43.
        var legacy = FrameParser()
        #expect(legacy.feed(Array(Self.frame(uptime: 10, details: details).replacingOccurrences(of: " \(Self.nonce)", with: "").utf8))
            .first?.processes?.map(\.pid) == [], "the legacy parser is fooled, which is why markers carry a nonce")
    }

    @Test func anOversizedDetailPartDropsTheDetailsButKeepsTheBaseMetrics() throws {
        var parser = FrameParser(nonce: Self.nonce)
        let line = String(repeating: "9", count: 1000) + "\n"
        let huge = "@@procs \(Self.nonce)\n" + String(repeating: "==> 1/stat <==\n" + line, count: 4400)
        let samples = parser.feed(Array((Self.frame(uptime: 10, details: huge) + Self.frame(uptime: 11)).utf8))
        try #require(samples.count == 2)
        #expect(samples[0].uptime == 10 && samples[0].memory != nil && samples[0].cpu != nil, "base metrics survive")
        #expect(samples[0].processes == nil)
        #expect(parser.droppedDetails == 1 && parser.droppedFrames == 0)
        #expect(samples[1].uptime == 11, "the next frame parses normally")
    }

    @Test func wholeDisksComeFromTheSysBlockListingWhenThereIsOne() {
        let names = ["nbd1", "nbd10", "nbd1p1", "nvme0n1", "nvme0n10", "nvme0n1p2", "md0", "md0p1", "sda", "sda1", "dm-0", "loop3"]
        let listing: Set<String> = ["nbd1", "nbd10", "nvme0n1", "nvme0n10", "md0", "sda", "dm-0", "loop3"]
        #expect(DiskStats.wholeDisks(names, blockDevices: listing) == ["nbd1", "nbd10", "nvme0n1", "nvme0n10", "sda"])
        // Without /sys/block the names decide: a disk whose name ends in a digit has "p" partitions.
        #expect(DiskStats.wholeDisks(names) == ["nbd1", "nbd10", "nvme0n1", "nvme0n10", "sda"])
        // The listing reaches Compute through the frame.
        var parser = FrameParser(nonce: Self.nonce)
        let stats = "==> diskstats <==\n" + names.map { "1 0 \($0) 1 0 8 0 1 0 8 0 0 0 0" }.joined(separator: "\n") + "\n"
        let text = Self.frame(uptime: 10).replacingOccurrences(of: "@@blocks", with: stats + "@@blocks")
        let s = parser.feed(Array(text.utf8))
        #expect(s.first?.blockDevices == ["nbd1", "nbd10", "nvme0n1", "nvme0n10", "md0", "sda"])
        #expect(Compute.snapshot(previous: nil, current: s[0], info: parser.info).disks?.map(\.name)
                == ["nbd1", "nbd10", "nvme0n1", "nvme0n10", "sda"])
    }

    @Test func aNon4096PageSizeAndExactProcessCPUAndRSS() throws {
        // 64 KiB pages (arm64, ppc64le kernels) and 250 clock ticks per second.
        let stat = { (ticks: Int) in "7 (worker) R 1 7 7 0 -1 0 0 0 0 0 \(ticks) 0 0 0 20 0 1 0 99 1000 50 0" }
        let a = Self.frame(uptime: 100, details: "@@procs \(Self.nonce)\n==> 7/stat <==\n\(stat(1000))\n==> 7/statm <==\n500 12 3 1 0 20 0\n")
        let b = Self.frame(uptime: 102, details: "@@procs \(Self.nonce)\n==> 7/stat <==\n\(stat(1250))\n==> 7/statm <==\n500 12 3 1 0 20 0\n")
        var parser = FrameParser(nonce: Self.nonce)
        let samples = parser.feed(Array(("@@termhost-metrics 2 65536 250 \(Self.nonce)\n" + a + b).utf8))
        try #require(samples.count == 2)
        #expect(parser.info.pageSize == 65536 && parser.info.clockTicks == 250)
        let p = try #require(Compute.snapshot(previous: samples[0], current: samples[1], info: parser.info).processes?.first)
        // 250 ticks over 2 s at 250 ticks/s: half a core.
        #expect(p.cpuPercent == 50)
        #expect(p.rssBytes == Double(12 * 65536))
    }

    @Test func failureReasonsNameWhatTheUserMustDo() {
        let unknown = FailureText.open(denied: true, message: """
            The authenticity of host '[127.0.0.1]:2222' can't be established.
            ED25519 key fingerprint is SHA256:abc.
            Host key verification failed: no terminal to ask
            """, host: "web1")
        #expect(unknown == .hostKeyUnknown("web1 is not in known_hosts yet (ED25519 key fingerprint is SHA256:abc)"))
        #expect(!unknown.retryable)
        #expect(MonitorState.failed(unknown).reason?.hasPrefix("host key not trusted: web1 is not in known_hosts yet") == true)
        #expect(MonitorState.failed(unknown).reason?.contains("termhost metrics show HOST") == true)
        let changed = FailureText.open(denied: true, message: "@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @\nOffending ED25519 key in /h/.ssh/known_hosts:3\nHost key verification failed.", host: "web1")
        #expect(changed == .hostKeyChanged("the server's host key does not match the one in known_hosts (Offending ED25519 key in /h/.ssh/known_hosts:3)"))
        if case .authNeeded = FailureText.open(denied: true, message: "ssh: Permission denied (publickey)", host: "h") {} else { Issue.record("auth") }
        if case .unreachable = FailureText.open(denied: false, message: "ssh: Connection refused", host: "h") {} else { Issue.record("io") }
        #expect(FailureText.exec(message: "ssh: the server refused to run the command: nope") == .commandFailed("ssh: the server refused to run the command: nope"))
        #expect(FailureText.exec(message: "ssh: cannot open a channel to h: Channel open failure (administratively prohibited)").kind == "command failed")
        #expect(FailureText.exec(message: "ssh: the connection is closed").kind == "unreachable")
    }

    static func report(_ host: String, _ state: MonitorState, at: Double, filesystems: [Filesystem] = []) -> HostReport {
        var s = Snapshot()
        s.uptime = 10
        s.cpu = Snapshot.CPU(total: 25, cores: [(0, 50)])
        s.memory = Snapshot.Memory(totalBytes: 1000, availableBytes: 500, usedBytes: 500, swapTotalBytes: 0, swapUsedBytes: 0)
        s.filesystems = filesystems
        s.sampleBytes = 100
        var r = HostReport(host: host, state: .live, interval: 1)
        r.apply(s, at: at)
        r.state = state
        return r
    }

    @Test func onlyLiveMonitorsWithFreshSectionsExportValues() throws {
        let now = 1000.0
        let reports = [Self.report("live", .live, at: now - 1), Self.report("failed", .failed(.unreachable("x")), at: now - 1),
                       Self.report("paused", .paused, at: now - 1), Self.report("sleeping", .sleeping, at: now - 1),
                       Self.report("stale", .live, at: now - 60)]
        let p = try PrometheusText.parse(Prometheus.render(reports, now: now))
        #expect(p.value("termhost_memory_total_bytes", ["host": "live"]) == 1000)
        #expect(p.value("termhost_metrics_sample_bytes", ["host": "live"]) == 100)
        for host in ["failed", "paused", "sleeping", "stale"] {
            let series = p.families.flatMap { name, f in f.samples.filter { $0.labels["host"] == host }.map { _ in name } }
            #expect(Set(series) == ["termhost_metrics_up", "termhost_metrics_state", "termhost_metrics_sample_age_seconds"], "\(host): \(series)")
            #expect(p.value("termhost_metrics_up", ["host": host]) == (host == "stale" ? 1 : 0))
        }
    }

    @Test func twoFilesystemsOnOneMountPointGiveOneSeries() throws {
        let fs = [Filesystem(device: "/dev/sda1", mount: "/data", sizeBytes: 100, usedBytes: 1, availableBytes: 99),
                  Filesystem(device: "server:/export", mount: "/data", sizeBytes: 500, usedBytes: 1, availableBytes: 400)]
        let p = try PrometheusText.parse(Prometheus.render([Self.report("h", .live, at: 999, filesystems: fs)], now: 1000))
        #expect(p.families["termhost_filesystem_size_bytes"]?.samples.count == 1)
        #expect(p.value("termhost_filesystem_size_bytes", ["host": "h", "mountpoint": "/data", "device": "server:/export"]) == 500)
        // df itself: the later line (the mount on top) wins.
        let df = DiskFree.parse("Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/sda1 10 1 9 10% /data\nsrv:/x 50 1 40 3% /data\n")
        #expect(df.map(\.device) == ["srv:/x"])
    }

    @Test func terminalTextHasNoControlsAndFitsByColumns() {
        #expect(TerminalText.clean("a\u{1b}[2Jb\u{07}\u{9b}c\u{202e}d") == "a?[2Jb??c?d")
        #expect(TerminalText.clean("/mnt/ok dir") == "/mnt/ok dir")
        #expect(TerminalText.columns("日本語") == 6 && TerminalText.columns("e\u{301}") == 1)
        #expect(TerminalText.fit("日本語", 5) == "日本")
        #expect(TerminalText.fit("abc", 5) == "abc")
    }

    @Test func theNonceGoesOnTheCommandLineAndCannotBreakTheQuoting() {
        let c = SamplerScript.command(interval: 5, details: true, nonce: "ab12'; rm -rf /")
        #expect(c.hasSuffix(" \(SamplerScript.processName) 5 1 ab12rmrf"))
        let n = SamplerScript.newNonce()
        #expect(n.count == 16 && n.allSatisfy(\.isHexDigit) && n != SamplerScript.newNonce())
    }
}
