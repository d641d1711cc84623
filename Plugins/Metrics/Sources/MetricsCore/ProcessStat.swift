/// One process from `/proc/[pid]/stat` and `/proc/[pid]/statm`. Identity is the PID plus its
/// start time (clock ticks after boot), so a reused PID is a different process. Only the
/// kernel's short command name (comm) is read: never arguments or environment.
public struct ProcessCounters: Sendable, Equatable {
    public var pid: Int
    public var name: String
    public var state: String
    /// utime + stime, in clock ticks.
    public var cpuTicks: UInt64
    public var startTicks: UInt64
    /// Resident pages (statm's second field); nil when statm was missing.
    public var residentPages: UInt64?

    public struct Identity: Hashable, Sendable { public var pid: Int; public var start: UInt64 }
    public var identity: Identity { Identity(pid: pid, start: startTicks) }

    /// Parses one stat line. comm may hold spaces and parentheses, so it runs from the first
    /// "(" to the last ")".
    public static func parseStat<S: StringProtocol>(_ line: S) -> ProcessCounters? {
        guard let open = line.firstIndex(of: "("), let close = line.lastIndex(of: ")"), open < close,
              let pid = Int(line[..<open].trimmingCharacters(" ")) else { return nil }
        let rest = ProcText.fields(line[line.index(after: close)...])
        // After comm: state(3) ppid(4) ... utime(14) stime(15) ... starttime(22), 1-based.
        guard rest.count >= 20, let utime = ProcText.counter(rest[11]), let stime = ProcText.counter(rest[12]),
              let start = ProcText.counter(rest[19]) else { return nil }
        let comm = line[line.index(after: open)..<close]
        let name = String(comm.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? "?" : Character($0) })
        return ProcessCounters(pid: pid, name: String(name.prefix(64)), state: String(rest[0].prefix(1)),
                               cpuTicks: ProcText.sum(utime, stime), startTicks: start, residentPages: nil)
    }

    /// statm's resident pages.
    public static func parseStatm<S: StringProtocol>(_ line: S) -> UInt64? {
        let f = ProcText.fields(line)
        return f.count >= 2 ? ProcText.counter(f[1]) : nil
    }
}

extension StringProtocol {
    func trimmingCharacters(_ c: Character) -> Substring {
        var s = Substring(self)
        while s.first == c { s.removeFirst() }
        while s.last == c { s.removeLast() }
        return s
    }
}
