/// The JSON snapshot of one host, shared by `metrics show --json` and the snapshot service
/// (org.termhost.metrics.snapshot/1). Every section carries when it was collected, its age
/// and whether it is stale; unknown or non-finite values are null; at most 20 processes.
public enum SnapshotJSON {
    public static func render(_ r: HostReport, now: Double) -> JSON {
        func section(_ at: Double?, _ members: [(String, JSON)]) -> JSON {
            guard let at else { return .null }
            return .object([("at", .string(rfc3339(at))), ("ageSeconds", .num(max(0, now - at))),
                            ("stale", .bool(r.isStale(at, now: now)))] + members)
        }
        var top: [(String, JSON)] = [
            ("host", .string(r.host)), ("state", .string(r.state.name)), ("reason", .str(r.state.reason)),
            ("now", .string(rfc3339(now))), ("intervalSeconds", .num(r.interval)), ("samples", .int(r.samples)),
            ("sampleBytes", .int(r.lastSampleBytes)),
        ]
        top.append(("uptime", section(r.uptime?.at, [("seconds", .num(r.uptime?.value))])))
        top.append(("cpu", section(r.cpu?.at, r.cpu.map { c in
            [("totalPercent", .num(c.value.total)),
             ("cores", .array(c.value.cores.map { .object([("core", .int($0.core)), ("percent", .num($0.percent))]) }))]
        } ?? [])))
        top.append(("memory", section(r.memory?.at, r.memory.map { m in
            [("totalBytes", .num(m.value.totalBytes)), ("availableBytes", .num(m.value.availableBytes)),
             ("usedBytes", .num(m.value.usedBytes)), ("swapTotalBytes", .num(m.value.swapTotalBytes)),
             ("swapUsedBytes", .num(m.value.swapUsedBytes))]
        } ?? [])))
        top.append(("load", section(r.load?.at, r.load.map { l in
            [("one", .num(l.value.one)), ("five", .num(l.value.five)), ("fifteen", .num(l.value.fifteen)),
             ("running", .int(l.value.running)), ("tasks", .int(l.value.tasks))]
        } ?? [])))
        top.append(("network", section(r.network?.at, r.network.map { n in
            var s = Snapshot(); s.network = n.value
            return [("receiveBytesPerSecond", .num(s.networkTotals?.receive)), ("transmitBytesPerSecond", .num(s.networkTotals?.transmit)),
                    ("interfaces", .array(n.value.map { .object([("name", .string($0.name)),
                                                                  ("receiveBytesPerSecond", .num($0.receiveBytesPerSecond)),
                                                                  ("transmitBytesPerSecond", .num($0.transmitBytesPerSecond))]) }))]
        } ?? [])))
        top.append(("disks", section(r.disks?.at, r.disks.map { d in
            var s = Snapshot(); s.disks = d.value
            return [("readBytesPerSecond", .num(s.diskTotals?.read)), ("writeBytesPerSecond", .num(s.diskTotals?.write)),
                    ("devices", .array(d.value.map { .object([("name", .string($0.name)),
                                                               ("readBytesPerSecond", .num($0.readBytesPerSecond)),
                                                               ("writeBytesPerSecond", .num($0.writeBytesPerSecond))]) }))]
        } ?? [])))
        top.append(("filesystems", section(r.filesystems?.at, r.filesystems.map { f in
            [("mounts", .array(f.value.map { .object([("mount", .string($0.mount)), ("device", .string($0.device)),
                                                      ("sizeBytes", .num(Double($0.sizeBytes))), ("usedBytes", .num(Double($0.usedBytes))),
                                                      ("availableBytes", .num(Double($0.availableBytes)))]) }))]
        } ?? [])))
        top.append(("processes", section(r.processes?.at, r.processes.map { p in
            [("count", .int(p.value.count)),
             ("top", .array(p.value.prefix(HostReport.maxProcesses).map { process($0) }))]
        } ?? [])))
        top.append(("gpus", section(r.gpus?.at, r.gpus.map { g in
            [("devices", .array(g.value.map { .object([("name", .string($0.name)), ("utilizationPercent", .num($0.utilizationPercent)),
                                                       ("memoryUsedBytes", .num($0.memoryUsedBytes)), ("memoryTotalBytes", .num($0.memoryTotalBytes)),
                                                       ("temperatureCelsius", .num($0.temperatureCelsius))]) }))]
        } ?? [])))
        return .object(top)
    }

    static func process(_ p: Snapshot.Process) -> JSON {
        .object([("pid", .int(p.pid)), ("startTicks", .num(Double(p.startTicks))), ("name", .string(p.name)),
                 ("state", .string(p.state)), ("cpuPercent", .num(p.cpuPercent)), ("rssBytes", .num(p.rssBytes))])
    }
}
