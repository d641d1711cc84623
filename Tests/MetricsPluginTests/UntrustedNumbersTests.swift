@testable import MetricsCore
import Testing

/// Counters from a remote host are untrusted: 2^64-1, values that overflow a product, counters
/// that go backwards. Nothing traps, and nothing wraps into a plausible wrong value.
@Suite struct UntrustedNumbersTests {
    @Test func dfSizesWhoseBytesOverflowAreLeftOutNotWrapped() {
        let max = UInt64.max
        let text = """
        Filesystem 1024-blocks Used Available Capacity Mounted on
        /dev/huge \(max) \(max / 2) 5 99% /huge
        /dev/vda1 1000 400 600 40% /
        """
        let fs = DiskFree.parse(text)
        #expect(fs.map(\.mount) == ["/"], "\(fs)")
        #expect(fs.first?.sizeBytes == 1_024_000)
    }

    @Test func gpuMemoryPastDoublesRangeIsUnknown() {
        let xml = "<gpu id=\"0\"><product_name>X</product_name><fb_memory_usage><total>1e308 MiB</total><used>12 MiB</used></fb_memory_usage></gpu>"
        let gpu = NvidiaSMI.parse(xml).first
        #expect(gpu?.memoryTotalBytes == nil)
        #expect(gpu?.memoryUsedBytes == 12_582_912.0)
    }

    @Test func processTimesSaturateInsteadOfWrapping() {
        let max = UInt64.max
        let line = "7 (x) S 1 1 1 0 -1 0 0 0 0 0 \(max) 5 0 0 20 0 1 0 100 0 0"
        #expect(ProcessCounters.parseStat(line)?.cpuTicks == max)
    }

    @Test func cpuCountersAtTheTopOrGoingBackwardsGiveNoUsage() throws {
        let max = UInt64.max
        let a = try #require(CPUStat.parse("cpu \(max) \(max) \(max) \(max) \(max) \(max) \(max) \(max) \(max) \(max)\n"))
        let b = try #require(CPUStat.parse("cpu 1 1 1 1 1 1 1 1 1 1\n"))
        #expect(CPUTimes.usage(from: a.total, to: b.total) == nil, "a counter went backwards")
        if let u = CPUTimes.usage(from: b.total, to: a.total) { #expect(u >= 0 && u <= 100) }
        // Rates: a counter that went backwards, or at 2^64-1, never traps.
        #expect(Compute.rate(max, 0, 1) == nil)
        #expect(Compute.rate(0, max, 1) == Double(max))
    }

    @Test func kilobyteMemoryValuesThatOverflowAreLeftOut() {
        let m = MemInfo.parse("MemTotal: \(UInt64.max) kB\nMemAvailable: 10 kB\n")
        #expect(m?.total == nil)
        #expect(m?.available == 10240)
    }
}

/// A remote nvidia-smi section is scanned in linear time and yields at most 64 GPUs, however
/// many `<gpu ` a hostile host repeats (it used to copy the rest of the text once per block).
@Suite struct GPUSectionBoundsTests {
    @Test func twentyFiveThousandGPUTagsGiveAtMost64GPUs() {
        let xml = String(repeating: "<gpu id=\"x\"><product_name>X</product_name>", count: 25_000)
        #expect(NvidiaSMI.parse(xml).count == NvidiaSMI.maxGPUs)
        #expect(NvidiaSMI.parse(xml).first?.name == "X")
    }
}

/// Whole disks among the names of /proc/diskstats, found in linear time (a host listing
/// thousands of devices cost a quadratic search per sample), with the same answers as the
/// pairwise rule.
@Suite struct WholeDiskSelectionTests {
    /// The rule as it was written before: any other name that is this one's disk.
    func pairwise(_ names: [String]) -> [String] {
        let all = Set(names)
        return names.filter { name in
            !["loop", "ram", "zram", "fd", "sr", "dm-", "md"].contains(where: { name.hasPrefix($0) })
                && !all.contains { parent in
                    guard parent != name, name.hasPrefix(parent) else { return false }
                    let s = name.dropFirst(parent.count)
                    let needsP = parent.last?.isNumber == true
                    guard !needsP || s.hasPrefix("p") else { return false }
                    let digits = needsP ? s.dropFirst() : s
                    return !digits.isEmpty && digits.allSatisfy(\.isNumber)
                }
        }.sorted()
    }

    @Test func theSameDisksAsThePairwiseRule() {
        let names = ["sda", "sda1", "sda12", "nvme0n1", "nvme0n1p1", "nvme0n10", "nbd1", "nbd10", "nbd1p1", "mmcblk0",
                     "mmcblk0p2", "vda", "xvda1", "p1", "1", "sdp", "sdp1", "x1p", "x1p2", "x1", "loop0", "dm-0", "md0"]
        #expect(DiskStats.wholeDisks(names) == pairwise(names))
        #expect(DiskStats.wholeDisks(names) == ["1", "mmcblk0", "nbd1", "nbd10", "nvme0n1", "nvme0n10", "p1", "sda", "sdp", "vda", "x1", "x1p", "xvda1"])
        let many = (0..<4096).map { "sd\($0 / 16)x\($0 % 16 == 0 ? "" : String($0 % 16))" }
        #expect(DiskStats.wholeDisks(many) == pairwise(many))
    }
}
