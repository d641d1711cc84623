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
    /// nvme0n1p1 beside nvme0n1), no device-mapper (dm-N) or software RAID (mdN), which sit on
    /// disks already counted, no loop, RAM, zram, floppy or optical devices.
    /// blockDevices: the remote /sys/block listing, which names exactly the whole disks (nbd10
    /// and nvme0n10 are disks, not partitions of nbd1 and nvme0n1); without it, names decide.
    public static func wholeDisks(_ names: some Collection<String>, blockDevices: Set<String>? = nil) -> [String] {
        let skip = ["loop", "ram", "zram", "fd", "sr", "dm-", "md"]
        let candidates = names.filter { name in !skip.contains(where: { name.hasPrefix($0) }) }
        if let blockDevices, !blockDevices.isEmpty {
            return candidates.filter(blockDevices.contains).sorted()
        }
        // Each name's possible disk is derived from the name itself and looked up, so this
        // stays linear in the number of names (a remote host may list thousands).
        let all = Set(names)
        return candidates.filter { name in !partitionParents(of: name).contains(where: all.contains) }.sorted()
    }

    /// The disks `name` would be a partition of. A partition's name is its disk's plus the
    /// number, with a "p" between when the disk's name ends in a digit (sda1, nvme0n1p1,
    /// mmcblk0p2, nbd1p1): so nbd10 is not nbd1's. Derived from the name alone, so the filter
    /// above is linear in the number of names.
    static func partitionParents(of name: String) -> [String] {
        let digits = name.reversed().prefix { $0.isNumber }.count
        guard digits > 0, digits < name.count else { return [] }
        let base = name.dropLast(digits)            // never ends in a digit
        var parents = [String(base)]                // sda1: sda's
        if base.last == "p", let before = base.dropLast().last, before.isNumber {
            parents.append(String(base.dropLast())) // nvme0n1p1: nvme0n1's
        }
        return parents
    }
}
