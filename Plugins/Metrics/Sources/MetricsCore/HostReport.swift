/// A monitor's state, as every output shows it.
public enum MonitorState: Sendable, Equatable {
    /// Opening the SSH connection (host key and authentication included).
    case connecting
    /// Connected; waiting for the second sample, before which no rate is known.
    case collecting
    case live
    /// Paused by the user (`metrics pause`); nothing runs, no connection is kept.
    case paused
    /// The process is in background (NOTES §5): sampling stopped, resumes on foreground.
    case sleeping
    /// Stopped with a reason the user can act on.
    case failed(Failure)

    public enum Failure: Error, Sendable, Equatable {
        case authNeeded(String), hostKeyUnknown(String), hostKeyChanged(String), commandFailed(String), unreachable(String)

        public var kind: String {
            switch self {
            case .authNeeded: "auth needed"
            case .hostKeyUnknown: "host key not trusted"
            case .hostKeyChanged: "host key changed"
            case .commandFailed: "command failed"
            case .unreachable: "unreachable"
            }
        }

        public var detail: String {
            switch self { case .authNeeded(let d), .hostKeyUnknown(let d), .hostKeyChanged(let d), .commandFailed(let d), .unreachable(let d): d }
        }

        /// Whether trying again later can help without the user doing something first.
        public var retryable: Bool {
            switch self { case .commandFailed, .unreachable: true; case .authNeeded, .hostKeyUnknown, .hostKeyChanged: false }
        }
    }

    public var name: String {
        switch self {
        case .connecting: "connecting"
        case .collecting: "collecting"
        case .live: "live"
        case .paused: "paused"
        case .sleeping: "sleeping"
        case .failed: "failed"
        }
    }

    /// "auth needed: ssh: Permission denied ...", with the step to take.
    public var reason: String? {
        guard case .failed(let f) = self else { return nil }
        let remedy = switch f {
        case .authNeeded: " (add a key or identity: termhost hosts edit, termhost identities add; then termhost metrics resume)"
        case .hostKeyUnknown: " (run termhost metrics show HOST in a terminal to check the key and trust it, then termhost metrics resume HOST)"
        case .hostKeyChanged: " (check the host key, fix ~/.ssh/known_hosts, then termhost metrics resume)"
        case .commandFailed: " (the host needs sh, head and /proc; retrying)"
        case .unreachable: " (retrying)"
        }
        return "\(f.kind): \(f.detail)\(remedy)"
    }

    public static let allNames = ["connecting", "collecting", "live", "paused", "sleeping", "failed"]
}

/// A value and when it was collected (wall clock, seconds since 1970).
public struct Timed<T: Sendable>: Sendable {
    public var value: T
    public var at: Double
}

/// One point of the five-minute history.
public struct HistoryPoint: Sendable, Equatable {
    public var at: Double
    public var cpuPercent: Double?
    public var memoryUsedBytes: Double?
    public var memoryTotalBytes: Double?
    public var receiveBytesPerSecond: Double?
    public var transmitBytesPerSecond: Double?
    public var readBytesPerSecond: Double?
    public var writeBytesPerSecond: Double?
    public var load1: Double?
}

/// Everything known about one monitored host: state, each section with its time, history.
public struct HostReport: Sendable {
    public static let historySeconds = 300.0
    /// At most this many processes in a snapshot for tools and --json (NOTES §8).
    public static let maxProcesses = 20

    public var host: String
    public var state: MonitorState
    public var interval: Double
    public var uptime: Timed<Double>?
    public var cpu: Timed<Snapshot.CPU>?
    public var memory: Timed<Snapshot.Memory>?
    public var load: Timed<Snapshot.Load>?
    public var network: Timed<[Snapshot.InterfaceRate]>?
    public var disks: Timed<[Snapshot.DiskRate]>?
    public var filesystems: Timed<[Filesystem]>?
    public var processes: Timed<[Snapshot.Process]>?
    public var gpus: Timed<[GPU]>?
    public var history: [HistoryPoint] = []
    public var samples = 0
    public var lastSampleBytes: Int?

    public init(host: String, state: MonitorState, interval: Double) {
        self.host = host
        self.state = state
        self.interval = interval
    }

    /// Takes the sections this snapshot has; the others keep their last value and age.
    public mutating func apply(_ s: Snapshot, at now: Double) {
        if let v = s.uptime { uptime = Timed(value: v, at: now) }
        if let v = s.cpu { cpu = Timed(value: v, at: now) }
        if let v = s.memory { memory = Timed(value: v, at: now) }
        if let v = s.load { load = Timed(value: v, at: now) }
        if let v = s.network { network = Timed(value: v, at: now) }
        if let v = s.disks { disks = Timed(value: v, at: now) }
        if let v = s.filesystems { filesystems = Timed(value: v, at: now) }
        if let v = s.processes { processes = Timed(value: v, at: now) }
        if let v = s.gpus { gpus = Timed(value: v, at: now) }
        samples += 1
        lastSampleBytes = s.sampleBytes
        let net = s.networkTotals, disk = s.diskTotals
        history.append(HistoryPoint(at: now, cpuPercent: s.cpu?.total, memoryUsedBytes: s.memory?.usedBytes,
                                    memoryTotalBytes: s.memory?.totalBytes, receiveBytesPerSecond: net?.receive,
                                    transmitBytesPerSecond: net?.transmit, readBytesPerSecond: disk?.read,
                                    writeBytesPerSecond: disk?.write, load1: s.load?.one))
        if let first = history.firstIndex(where: { $0.at > now - HostReport.historySeconds }), first > 0 {
            history.removeFirst(first)
        }
    }

    /// A section is stale once it missed three samples (and at least 5 s).
    public func isStale(_ at: Double, now: Double) -> Bool { now - at > max(3 * interval, 5) }
}
