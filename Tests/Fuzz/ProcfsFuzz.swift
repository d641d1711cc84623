// fuzz-sources: Plugins/Metrics/Sources/MetricsCore/FrameParser.swift Plugins/Metrics/Sources/MetricsCore/RawSample.swift Plugins/Metrics/Sources/MetricsCore/ProcText.swift Plugins/Metrics/Sources/MetricsCore/CPUStat.swift Plugins/Metrics/Sources/MetricsCore/MemInfo.swift Plugins/Metrics/Sources/MetricsCore/LoadAvg.swift Plugins/Metrics/Sources/MetricsCore/NetDev.swift Plugins/Metrics/Sources/MetricsCore/DiskStats.swift Plugins/Metrics/Sources/MetricsCore/DiskFree.swift Plugins/Metrics/Sources/MetricsCore/NvidiaSMI.swift Plugins/Metrics/Sources/MetricsCore/ProcessStat.swift Plugins/Metrics/Sources/MetricsCore/Compute.swift Plugins/Metrics/Sources/MetricsCore/Snapshot.swift
// The remote sampling loop's output, as a hostile host could write it: the frame parser and,
// through it, every procfs parser (stat, meminfo, loadavg, uptime, net/dev, diskstats, df,
// processes, nvidia-smi), then the rates computed from consecutive samples. Nothing traps, and
// every computed value stays in its range.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    // Fed in two pieces, as a channel delivers it; the split point comes from the input.
    let cut = size == 0 ? 0 : Int(bytes[0]) * size / 256
    var parser = FrameParser()
    var samples = parser.feed(bytes[..<cut])
    samples += parser.feed(bytes[cut...])
    precondition(parser.info.pageSize >= 512 && parser.info.clockTicks > 0)
    var previous: RawSample? = nil
    for raw in samples {
        // Also straight through the parsers, whatever the frame held.
        let s = Compute.snapshot(previous: previous, current: raw, info: parser.info)
        if let total = s.cpu?.total { precondition(total >= 0 && total <= 100) }
        for (_, core) in s.cpu?.cores ?? [] { if let c = core { precondition(c >= 0 && c <= 100) } }
        if let used = s.memory?.usedBytes, let total = s.memory?.totalBytes { precondition(used >= 0 && used <= total) }
        for n in s.network ?? [] {
            for r in [n.receiveBytesPerSecond, n.transmitBytesPerSecond] { if let r { precondition(r >= 0 && r.isFinite) } }
        }
        for d in s.disks ?? [] {
            for r in [d.readBytesPerSecond, d.writeBytesPerSecond] { if let r { precondition(r >= 0 && r.isFinite) } }
        }
        for p in s.processes ?? [] {
            if let c = p.cpuPercent { precondition(c >= 0 && c.isFinite) }
            if let r = p.rssBytes { precondition(r >= 0) }
        }
        for g in raw.gpus ?? [] {
            for v in [g.memoryUsedBytes, g.memoryTotalBytes] { if let v { precondition(v.isFinite) } }
        }
        previous = raw
    }
    return 0
}
