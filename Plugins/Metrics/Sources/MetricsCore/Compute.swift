/// Turns consecutive raw samples into a Snapshot. Rates divide by the remote uptime's delta:
/// our clock measures when bytes arrived, not when the host read its counters.
public enum Compute {
    /// previous: the sample before (nil for the first: every rate is unknown).
    /// interfaces: an explicit selection, or nil for the default (physical interfaces).
    public static func snapshot(previous: RawSample?, current: RawSample, info: RemoteInfo,
                                interfaces: [String]? = nil) -> Snapshot {
        var s = Snapshot()
        s.uptime = current.uptime
        s.sampleBytes = current.bytes
        // Seconds between the two readings on the remote clock; nil when invalid (a reboot
        // makes it negative; the same reading twice makes it 0).
        let elapsed: Double? = {
            guard let a = previous?.uptime, let b = current.uptime, b > a else { return nil }
            return b - a
        }()
        // After a reboot every counter restarted: no delta is valid, even one that happens to grow.
        let prev = elapsed == nil ? nil : previous

        if let cpu = current.cpu {
            let before = prev?.cpu
            s.cpu = Snapshot.CPU(total: before.flatMap { CPUTimes.usage(from: $0.total, to: cpu.total) },
                                 cores: cpu.cores.keys.sorted().map { n in
                                     (n, before?.cores[n].flatMap { CPUTimes.usage(from: $0, to: cpu.cores[n]!) })
                                 })
        }

        if let m = current.memory {
            var mem = Snapshot.Memory()
            mem.totalBytes = m.total.map { Double($0) }
            mem.availableBytes = m.available.map { Double($0) }
            if let t = m.total, let a = m.available, a <= t { mem.usedBytes = Double(t - a) }
            mem.swapTotalBytes = m.swapTotal.map { Double($0) }
            if let t = m.swapTotal, let f = m.swapFree, f <= t { mem.swapUsedBytes = Double(t - f) }
            s.memory = mem
        }

        if let l = current.load {
            s.load = Snapshot.Load(one: l.one, five: l.five, fifteen: l.fifteen, running: l.running, tasks: l.tasks)
        }

        if let now = current.interfaces {
            let names = interfaces ?? NetDev.defaultSelection(Array(now.keys), physical: info.physicalInterfaces)
            s.network = names.map { name in
                let b = now[name], a = prev?.interfaces?[name]
                return Snapshot.InterfaceRate(name: name, receiveBytesPerSecond: rate(a?.rxBytes, b?.rxBytes, elapsed),
                                              transmitBytesPerSecond: rate(a?.txBytes, b?.txBytes, elapsed))
            }
        }

        if let now = current.disks {
            s.disks = DiskStats.wholeDisks(Array(now.keys), blockDevices: current.blockDevices).map { name in
                let b = now[name]!, a = prev?.disks?[name]
                return Snapshot.DiskRate(name: name, readBytesPerSecond: rate(a?.readBytes, b.readBytes, elapsed),
                                         writeBytesPerSecond: rate(a?.writtenBytes, b.writtenBytes, elapsed))
            }
        }

        s.filesystems = current.filesystems
        s.gpus = current.gpus

        if let procs = current.processes {
            var before: [ProcessCounters.Identity: UInt64] = [:]
            for p in prev?.processes ?? [] { before[p.identity] = p.cpuTicks }
            s.processes = procs.map { p in
                var cpu: Double? = nil
                if let e = elapsed, let a = before[p.identity], p.cpuTicks >= a {
                    cpu = Double(p.cpuTicks - a) / Double(info.clockTicks) / e * 100
                }
                let (rss, overflow) = (p.residentPages ?? 0).multipliedReportingOverflow(by: info.pageSize)
                return Snapshot.Process(pid: p.pid, startTicks: p.startTicks, name: p.name, state: p.state, cpuPercent: cpu,
                                        rssBytes: p.residentPages == nil || overflow ? nil : Double(rss))
            }.sorted(by: Compute.byCPU)
        }
        return s
    }

    /// Bytes per second between two counter readings; nil when either is missing, no time
    /// passed, or the counter went backwards (reset, wrap, a re-created interface).
    public static func rate(_ a: UInt64?, _ b: UInt64?, _ elapsed: Double?) -> Double? {
        guard let a, let b, let elapsed, elapsed > 0, b >= a else { return nil }
        return Double(b - a) / elapsed
    }

    /// Most CPU first (unknown last), then most memory, then PID.
    public static func byCPU(_ a: Snapshot.Process, _ b: Snapshot.Process) -> Bool {
        if (a.cpuPercent ?? -1) != (b.cpuPercent ?? -1) { return (a.cpuPercent ?? -1) > (b.cpuPercent ?? -1) }
        if (a.rssBytes ?? -1) != (b.rssBytes ?? -1) { return (a.rssBytes ?? -1) > (b.rssBytes ?? -1) }
        return a.pid < b.pid
    }

    public static func byMemory(_ a: Snapshot.Process, _ b: Snapshot.Process) -> Bool {
        if (a.rssBytes ?? -1) != (b.rssBytes ?? -1) { return (a.rssBytes ?? -1) > (b.rssBytes ?? -1) }
        return byCPU(a, b)
    }
}
