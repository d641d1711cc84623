/// `/proc/stat`'s cpu lines: cumulative jiffies per state, for the machine ("cpu") and each
/// online core ("cpuN"). Usage is computed the way htop does (see `usage(from:to:)`).
public struct CPUTimes: Sendable, Equatable {
    public var user: UInt64 = 0, nice: UInt64 = 0, system: UInt64 = 0, idle: UInt64 = 0
    public var iowait: UInt64 = 0, irq: UInt64 = 0, softirq: UInt64 = 0, steal: UInt64 = 0
    public var guest: UInt64 = 0, guestNice: UInt64 = 0

    public init() {}

    /// Parses the numbers after the "cpu"/"cpuN" label. Kernels before 2.6.11 have fewer
    /// columns (missing ones are 0); fewer than the first four is not a cpu line.
    init?(_ values: [Substring]) {
        let n = values.compactMap { ProcText.counter($0) }
        guard n.count == values.count, n.count >= 4 else { return nil }
        func at(_ i: Int) -> UInt64 { i < n.count ? n[i] : 0 }
        user = at(0); nice = at(1); system = at(2); idle = at(3); iowait = at(4)
        irq = at(5); softirq = at(6); steal = at(7); guest = at(8); guestNice = at(9)
    }

    /// htop's idlealltime: idle + iowait.
    var idleAll: Int64 { Int64(bitPattern: idle &+ iowait) }
    /// htop's totaltime: (user - guest) + (nice - guest_nice) + system + irq + softirq +
    /// idle + iowait + steal + guest + guest_nice. guest is already counted inside user (and
    /// guest_nice inside nice), so htop subtracts it there and adds it back as virtual time.
    var total: Int64 {
        let userTime = Int64(bitPattern: user &- guest), niceTime = Int64(bitPattern: nice &- guestNice)
        let systemAll = Int64(bitPattern: system &+ irq &+ softirq)
        let virtAll = Int64(bitPattern: guest &+ guestNice)
        return userTime &+ niceTime &+ systemAll &+ idleAll &+ Int64(bitPattern: steal) &+ virtAll
    }

    /// Percent busy between two readings (0...100), htop's formula:
    /// (Δtotal - Δidleall) / Δtotal. nil when the delta is not valid: no time passed, a
    /// counter went backwards (reset, reboot, wrap, a core that went offline and back).
    public static func usage(from a: CPUTimes, to b: CPUTimes) -> Double? {
        let total = b.total &- a.total, idle = b.idleAll &- a.idleAll
        guard total > 0, idle >= 0, idle <= total, b.user >= a.user, b.system >= a.system, b.idle >= a.idle else { return nil }
        return Double(total - idle) / Double(total) * 100
    }
}

/// The cpu lines of one `/proc/stat` reading.
public struct CPUStat: Sendable, Equatable {
    public var total: CPUTimes
    /// Keyed by core number: offline cores are absent, so numbers may have gaps.
    public var cores: [Int: CPUTimes]

    /// nil when there is no valid aggregate "cpu" line.
    public static func parse<S: StringProtocol>(_ text: S) -> CPUStat? {
        var total: CPUTimes?
        var cores: [Int: CPUTimes] = [:]
        for line in ProcText.lines(text) where line.hasPrefix("cpu") {
            let f = ProcText.fields(line)
            guard let label = f.first, let times = CPUTimes(Array(f.dropFirst())) else { continue }
            if label == "cpu" { total = times }
            else if let n = Int(label.dropFirst(3)), n >= 0 { cores[n] = times }
        }
        return total.map { CPUStat(total: $0, cores: cores) }
    }
}
