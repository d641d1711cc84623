/// `/proc/diskstats`: cumulative sectors read and written per block device. Sectors here
/// are always 512 bytes, whatever the device's own sector size (kernel Documentation/
/// admin-guide/iostats.rst).
public struct DiskCounters: Sendable, Equatable {
    public var readBytes: UInt64
    public var writtenBytes: UInt64
}

public enum DiskStats {
    public static func parse<S: StringProtocol>(_ text: S) -> [String: DiskCounters]? {
        var out: [String: DiskCounters] = [:]
        for line in ProcText.lines(text) {
            let f = ProcText.fields(line)
            guard f.count >= 10, ProcText.counter(f[0]) != nil, ProcText.counter(f[1]) != nil,
                  let read = ProcText.counter(f[5]), let written = ProcText.counter(f[9]) else { continue }
            let (r, o1) = read.multipliedReportingOverflow(by: 512), (w, o2) = written.multipliedReportingOverflow(by: 512)
            guard !o1, !o2 else { continue }
            out[String(f[2])] = DiskCounters(readBytes: r, writtenBytes: w)
        }
        return out.isEmpty ? nil : out
    }

    /// Whole disks only, so throughput is not counted twice: no partitions (sda1 beside sda,
    /// nvme0n1p1 beside nvme0n1), no device-mapper (dm-N sits on a disk already counted), no
    /// loop, RAM, zram, floppy or optical devices.
    public static func wholeDisks(_ names: some Collection<String>) -> [String] {
        let skip = ["loop", "ram", "zram", "fd", "sr", "dm-"]
        let all = Set(names)
        return names.filter { name in
            if skip.contains(where: { name.hasPrefix($0) }) { return false }
            return !all.contains { parent in parent != name && name.hasPrefix(parent) && isPartitionSuffix(name.dropFirst(parent.count)) }
        }.sorted()
    }

    static func isPartitionSuffix(_ s: Substring) -> Bool {
        let digits = s.hasPrefix("p") ? s.dropFirst() : s
        return !digits.isEmpty && digits.allSatisfy(\.isNumber)
    }
}
