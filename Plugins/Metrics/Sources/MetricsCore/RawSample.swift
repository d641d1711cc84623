/// Everything one frame of the remote loop carried, parsed. A section is nil when its file
/// was missing or unreadable (a container without /proc/diskstats, a BusyBox without df):
/// the other sections still count.
public struct RawSample: Sendable, Equatable {
    public var uptime: Double?
    public var cpu: CPUStat?
    public var memory: MemInfo?
    public var load: LoadAvg?
    public var interfaces: [String: NetCounters]?
    public var disks: [String: DiskCounters]?
    /// nil when not collected (nobody is looking at details) or df failed.
    public var filesystems: [Filesystem]?
    public var processes: [ProcessCounters]?
    public var gpus: [GPU]?
    /// The remote /sys/block names (whole disks as the kernel sees them); nil when unknown.
    public var blockDevices: Set<String>?
    /// Bytes of remote output this frame took (for the benchmark and the operator).
    public var bytes: Int = 0

    public init() {}
}

/// What the loop says once at start: its protocol version, the page size and clock ticks
/// per second of the remote host, and which network interfaces have a device in /sys.
public struct RemoteInfo: Sendable, Equatable {
    public var pageSize: UInt64 = 4096
    public var clockTicks: UInt64 = 100
    public var physicalInterfaces: Set<String>? = nil
    public init() {}
}
