/// `df -P -k` (POSIX format, GNU and BusyBox alike): capacity per mounted filesystem.
public struct Filesystem: Sendable, Equatable {
    public var device: String
    public var mount: String
    public var sizeBytes: UInt64
    public var usedBytes: UInt64
    public var availableBytes: UInt64
}

public enum DiskFree {
    /// Pseudo filesystems carry no disk capacity worth showing.
    static let pseudo: Set<String> = ["tmpfs", "devtmpfs", "udev", "none", "shm", "proc", "sysfs", "cgroup", "cgroup2",
                                      "devpts", "mqueue", "run", "efivarfs"]

    /// One entry per mount point: when two filesystems are mounted on the same path (a mount
    /// over another), the later line, the one visible there, wins.
    public static func parse<S: StringProtocol>(_ text: S) -> [Filesystem] {
        var out: [Filesystem] = []
        for line in ProcText.lines(text) {
            let f = ProcText.fields(line)
            guard f.count >= 6, let blocks = ProcText.counter(f[1]), let used = ProcText.counter(f[2]),
                  let avail = ProcText.counter(f[3]), f[4].hasSuffix("%"), blocks > 0,
                  !pseudo.contains(String(f[0])) else { continue }
            // KiB from a remote df: a count whose bytes do not fit 64 bits is not a real
            // filesystem, and a wrapped product would show a plausible wrong size.
            let (size, o1) = blocks.multipliedReportingOverflow(by: 1024)
            let (usedBytes, o2) = used.multipliedReportingOverflow(by: 1024)
            let (availBytes, o3) = avail.multipliedReportingOverflow(by: 1024)
            guard !o1, !o2, !o3 else { continue }
            let fs = Filesystem(device: String(f[0]), mount: f[5...].joined(separator: " "),
                                sizeBytes: size, usedBytes: usedBytes, availableBytes: availBytes)
            if let i = out.firstIndex(where: { $0.mount == fs.mount }) { out.remove(at: i) }
            out.append(fs)
        }
        return out
    }
}
