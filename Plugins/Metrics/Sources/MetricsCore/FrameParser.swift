/// Splits the remote loop's output (SamplerScript) into frames and parses each.
///
/// The stream is lines. "@@termhost-metrics 1 PAGESIZE CLK_TCK" and "@@phys PATHS" come once;
/// then each sample is "@@sample", head's "==> FILE <==" sections, optional "@@df", "@@procs"
/// and "@@gpu" sections, and "@@end". A frame is used only once its "@@end" arrived, so a
/// truncated frame (the channel dropped mid-sample) is never half-applied.
public struct FrameParser: Sendable {
    /// A frame larger than this is dropped (and counted): reads stay bounded whatever the host sends.
    public static let maxFrameBytes = 4 * 1024 * 1024

    public private(set) var info = RemoteInfo()
    public private(set) var sawHello = false
    public private(set) var droppedFrames = 0
    private var pending: [UInt8] = []
    private var frame: [Substring]? = nil
    private var frameBytes = 0

    public init() {}

    /// Feeds bytes as they arrive; returns the samples completed by them.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [RawSample] {
        var done: [RawSample] = []
        for byte in bytes {
            if byte != UInt8(ascii: "\n") {
                if pending.count < FrameParser.maxFrameBytes { pending.append(byte) }
                continue
            }
            let line = String(decoding: pending, as: UTF8.self)
            frameBytes += pending.count + 1
            pending.removeAll(keepingCapacity: true)
            if let sample = take(Substring(line)) { done.append(sample) }
        }
        return done
    }

    private mutating func take(_ line: Substring) -> RawSample? {
        if line.hasPrefix("@@termhost-metrics ") {
            let f = ProcText.fields(line)
            if f.count >= 4 {
                if let p = ProcText.counter(f[2]), p >= 512, p <= 1 << 24 { info.pageSize = p }
                if let t = ProcText.counter(f[3]), t > 0, t <= 100_000 { info.clockTicks = t }
            }
            sawHello = true
            return nil
        }
        if line.hasPrefix("@@phys") {
            // "/sys/class/net/eth0/device" per physical NIC; an unmatched glob stays literal.
            let names = ProcText.fields(line).dropFirst().compactMap { path -> String? in
                let parts = path.split(separator: "/")
                guard parts.count >= 5, parts.last == "device", parts[parts.count - 2] != "*" else { return nil }
                return String(parts[parts.count - 2])
            }
            info.physicalInterfaces = Set(names)
            return nil
        }
        if line == "@@sample" { frame = []; frameBytes = line.utf8.count + 1; return nil }
        guard frame != nil else { return nil }
        if frameBytes > FrameParser.maxFrameBytes { frame = nil; droppedFrames += 1; return nil }
        if line == "@@end" {
            defer { frame = nil }
            var sample = FrameParser.parse(frame!)
            sample.bytes = frameBytes
            return sample
        }
        frame!.append(line)
        return nil
    }

    /// Parses the lines of one frame (between "@@sample" and "@@end").
    public static func parse(_ lines: [Substring]) -> RawSample {
        // Keys: head's file names for the base files ("stat", "net/dev"), then "df", "procs",
        // "gpu" from the "@@" markers. Inside "procs", head's headers stay in the lines.
        var sections: [String: [Substring]] = [:]
        var current = ""
        var base = true
        for line in lines {
            if line.hasPrefix("@@") {
                current = String(line.dropFirst(2))
                base = false
                sections[current, default: []] += []
            } else if base, line.hasPrefix("==> "), line.hasSuffix(" <==") {
                current = String(line.dropFirst(4).dropLast(4))
                sections[current, default: []] += []
            } else {
                sections[current, default: []].append(line)
            }
        }
        func text(_ key: String) -> String? { sections[key].map { $0.joined(separator: "\n") } }
        var s = RawSample()
        s.uptime = text("uptime").flatMap(Uptime.parse)
        s.cpu = text("stat").flatMap(CPUStat.parse)
        s.memory = text("meminfo").flatMap(MemInfo.parse)
        s.load = text("loadavg").flatMap(LoadAvg.parse)
        s.interfaces = text("net/dev").flatMap(NetDev.parse)
        s.disks = text("diskstats").flatMap(DiskStats.parse)
        if let df = text("df") { s.filesystems = DiskFree.parse(df) }
        if let procs = sections["procs"] { s.processes = parseProcesses(procs) }
        if let gpu = text("gpu") { s.gpus = NvidiaSMI.parse(gpu) }
        return s
    }

    /// head's output for "[0-9]*/stat [0-9]*/statm": a header naming "PID/stat" or
    /// "PID/statm", then its first line. A process that exited in between leaves a header
    /// with nothing after it, or a stat without statm: it is kept with RSS unknown.
    static func parseProcesses(_ lines: [Substring]) -> [ProcessCounters] {
        var byPID: [Int: ProcessCounters] = [:]
        var resident: [Int: UInt64] = [:]
        var file: (pid: Int, kind: Substring)? = nil
        for line in lines {
            if line.hasPrefix("==> "), line.hasSuffix(" <==") {
                let path = line.dropFirst(4).dropLast(4).split(separator: "/")
                file = path.count == 2 ? Int(path[0]).map { ($0, path[1]) } : nil
                continue
            }
            guard let f = file else { continue }
            file = nil
            if f.kind == "stat", let p = ProcessCounters.parseStat(line), p.pid == f.pid { byPID[p.pid] = p }
            else if f.kind == "statm", let r = ProcessCounters.parseStatm(line) { resident[f.pid] = r }
        }
        for (pid, r) in resident { byPID[pid]?.residentPages = r }
        return byPID.values.sorted { $0.pid < $1.pid }
    }
}
