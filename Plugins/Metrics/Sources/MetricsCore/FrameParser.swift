/// Splits the remote loop's output (SamplerScript) into frames and parses each.
///
/// The stream is lines. "@@termhost-metrics VERSION PAGESIZE CLK_TCK [NONCE]" and "@@phys
/// PATHS" come once; then each sample is "@@sample", head's "==> FILE <==" sections, an
/// "@@blocks" section, "@@base" (the end of the base part), optional "@@df", "@@procs" and
/// "@@gpu" sections, and "@@end". Every marker carries the run's nonce ("@@end 3fa9..."): a
/// line that merely looks like a marker (a process name) is data. A frame is used only once
/// its "@@end" arrived, so a truncated frame (the channel dropped mid-sample) is never
/// half-applied.
///
/// Bounds: a base part over `maxFrameBytes` drops the frame; a detail part over it drops the
/// details only (the base metrics of that frame still count).
/// Recordings without a nonce and without "@@base" (older loops) parse too: their base part
/// ends at the first detail marker.
public struct FrameParser: Sendable {
    public static let maxFrameBytes = 4 * 1024 * 1024

    public let nonce: String
    public private(set) var info = RemoteInfo()
    public private(set) var sawHello = false
    /// Frames dropped whole (base part too large).
    public private(set) var droppedFrames = 0
    /// Frames whose details were dropped (detail part too large).
    public private(set) var droppedDetails = 0
    private var pending: [UInt8] = []
    private var frame: [Substring]? = nil
    /// Lines of the frame's base part, once "@@base" arrived.
    private var baseCount: Int? = nil
    private var baseBytes = 0, detailBytes = 0, frameBytes = 0
    private var detailsOverflowed = false

    /// nonce: the word the loop was started with (empty for recordings without one).
    public init(nonce: String = "") { self.nonce = nonce }

    /// Feeds bytes as they arrive; returns the samples completed by them.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [RawSample] {
        var done: [RawSample] = []
        for byte in bytes {
            if byte != UInt8(ascii: "\n") {
                if pending.count <= FrameParser.maxFrameBytes { pending.append(byte) }
                continue
            }
            let line = String(decoding: pending, as: UTF8.self)
            let size = pending.count + 1
            pending.removeAll(keepingCapacity: true)
            if let sample = take(Substring(line), size: size) { done.append(sample) }
        }
        return done
    }

    /// The marker's name ("sample", "end", "df") when line is a marker of this run.
    private func marker(_ line: Substring) -> Substring? {
        guard line.hasPrefix("@@") else { return nil }
        if nonce.isEmpty { return line.dropFirst(2) }
        let suffix = " " + nonce
        guard line.hasSuffix(suffix) else { return nil }
        return line.dropFirst(2).dropLast(suffix.count)
    }

    private mutating func take(_ line: Substring, size: Int) -> RawSample? {
        if line.hasPrefix("@@termhost-metrics ") {
            let f = ProcText.fields(line)
            if f.count >= 4 {
                if let p = ProcText.counter(f[2]), p >= 512, p <= 1 << 24 { info.pageSize = p }
                if let t = ProcText.counter(f[3]), t > 0, t <= 100_000 { info.clockTicks = t }
            }
            sawHello = true
            return nil
        }
        if frame == nil, line.hasPrefix("@@phys") {
            // "/sys/class/net/eth0/device" per physical NIC; an unmatched glob stays literal.
            let names = ProcText.fields(line).dropFirst().compactMap { path -> String? in
                let parts = path.split(separator: "/")
                guard parts.count >= 5, parts.last == "device", parts[parts.count - 2] != "*" else { return nil }
                return String(parts[parts.count - 2])
            }
            info.physicalInterfaces = Set(names)
            return nil
        }
        let name = marker(line)
        if name == "sample" {
            frame = []; baseCount = nil; baseBytes = size; detailBytes = 0; frameBytes = size; detailsOverflowed = false
            return nil
        }
        guard frame != nil else { return nil }
        frameBytes += size
        if let name, name == "end" {
            defer { frame = nil }
            if detailsOverflowed, let n = baseCount { frame!.removeSubrange(n...); droppedDetails += 1 }
            var sample = FrameParser.parse(frame!)
            sample.bytes = frameBytes
            return sample
        }
        if let name, name == "base" { baseCount = frame!.count; return nil }
        if baseCount == nil, let name, ["df", "procs", "gpu"].contains(name) { baseCount = frame!.count }
        if baseCount == nil {
            baseBytes += size
            if baseBytes > FrameParser.maxFrameBytes { frame = nil; droppedFrames += 1; return nil }
        } else {
            if detailsOverflowed { return nil }
            detailBytes += size
            if detailBytes > FrameParser.maxFrameBytes { detailsOverflowed = true; return nil }
        }
        if let name { frame!.append("@@" + name) }
        // Not a marker of this run: data, never a section boundary.
        else if line.hasPrefix("@@") { frame!.append(" " + line) }
        else { frame!.append(line) }
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
        if let blocks = sections["blocks"] {
            // "/sys/block/sda /sys/block/nvme0n1"; an unmatched glob (no /sys) stays literal.
            let names = blocks.flatMap { ProcText.fields($0) }.compactMap { path -> String? in
                guard path.hasPrefix("/sys/block/"), let last = path.split(separator: "/").last, last != "*" else { return nil }
                return String(last)
            }
            if !names.isEmpty { s.blockDevices = Set(names) }
        }
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
