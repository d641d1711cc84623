/// Metrics computed from two consecutive samples. nil is unknown (not collected, or an
/// invalid delta): it is shown as "-" or JSON null and left out of Prometheus, never as 0.
public struct Snapshot: Sendable, Equatable {
    public struct CPU: Sendable, Equatable {
        /// Percent busy, 0...100, all cores together.
        public var total: Double?
        /// Percent busy per core number.
        public var cores: [(core: Int, percent: Double?)]
        public static func == (a: CPU, b: CPU) -> Bool {
            a.total == b.total && a.cores.map(\.core) == b.cores.map(\.core) && a.cores.map(\.percent) == b.cores.map(\.percent)
        }
    }

    public struct Memory: Sendable, Equatable {
        public var totalBytes: Double?
        public var availableBytes: Double?
        /// total - available.
        public var usedBytes: Double?
        public var swapTotalBytes: Double?
        /// SwapTotal - SwapFree.
        public var swapUsedBytes: Double?
    }

    public struct Load: Sendable, Equatable {
        public var one: Double, five: Double, fifteen: Double
        public var running: Int?, tasks: Int?
    }

    public struct InterfaceRate: Sendable, Equatable {
        public var name: String
        public var receiveBytesPerSecond: Double?
        public var transmitBytesPerSecond: Double?
    }

    public struct DiskRate: Sendable, Equatable {
        public var name: String
        public var readBytesPerSecond: Double?
        public var writeBytesPerSecond: Double?
    }

    public struct Process: Sendable, Equatable {
        public var pid: Int
        /// Clock ticks after boot: with pid, the process's identity.
        public var startTicks: UInt64
        public var name: String
        public var state: String
        /// Percent of one core (like top: 200 is two cores busy); nil for a process first seen now.
        public var cpuPercent: Double?
        public var rssBytes: Double?
    }

    public var uptime: Double?
    public var cpu: CPU?
    public var memory: Memory?
    public var load: Load?
    /// The selected interfaces (physical by default).
    public var network: [InterfaceRate]?
    public var disks: [DiskRate]?
    public var filesystems: [Filesystem]?
    /// Every process seen, most CPU first; outputs cut this to what they show.
    public var processes: [Process]?
    public var gpus: [GPU]?
    /// Bytes of remote output for this sample.
    public var sampleBytes: Int = 0

    public init() {}

    /// Sum over the shown interfaces; unknown if any of them is unknown.
    public var networkTotals: (receive: Double?, transmit: Double?)? {
        guard let network, !network.isEmpty else { return nil }
        func sum(_ values: [Double?]) -> Double? { values.contains { $0 == nil } ? nil : values.reduce(0) { $0 + $1! } }
        return (sum(network.map(\.receiveBytesPerSecond)), sum(network.map(\.transmitBytesPerSecond)))
    }

    public var diskTotals: (read: Double?, write: Double?)? {
        guard let disks, !disks.isEmpty else { return nil }
        func sum(_ values: [Double?]) -> Double? { values.contains { $0 == nil } ? nil : values.reduce(0) { $0 + $1! } }
        return (sum(disks.map(\.readBytesPerSecond)), sum(disks.map(\.writeBytesPerSecond)))
    }
}
