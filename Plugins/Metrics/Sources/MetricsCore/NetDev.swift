/// `/proc/net/dev`: cumulative bytes per interface.
public struct NetCounters: Sendable, Equatable {
    public var rxBytes: UInt64
    public var txBytes: UInt64
}

public enum NetDev {
    /// Interface name to counters; two header lines and malformed lines are skipped.
    public static func parse<S: StringProtocol>(_ text: S) -> [String: NetCounters]? {
        var out: [String: NetCounters] = [:]
        for line in ProcText.lines(text) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingSpaces
            let f = ProcText.fields(line[line.index(after: colon)...])
            guard !name.isEmpty, !name.contains("|"), f.count >= 9,
                  let rx = ProcText.counter(f[0]), let tx = ProcText.counter(f[8]) else { continue }
            out[String(name)] = NetCounters(rxBytes: rx, txBytes: tx)
        }
        return out.isEmpty ? nil : out
    }

    /// The interfaces shown by default: those the remote /sys says have a device (physical
    /// NICs), else (a container, no /sys) everything but loopback and well-known virtual
    /// names. An explicit selection overrides both.
    public static func defaultSelection(_ names: some Collection<String>, physical: Set<String>?) -> [String] {
        if let physical, !physical.isEmpty {
            let chosen = names.filter { physical.contains($0) }
            if !chosen.isEmpty { return chosen.sorted() }
        }
        let virtualPrefixes = ["lo", "docker", "veth", "br-", "virbr", "tun", "tap", "cni", "flannel", "cali", "vxlan", "kube", "ifb", "dummy", "bond-slave"]
        let rest = names.filter { n in !virtualPrefixes.contains { n.hasPrefix($0) } }
        return rest.sorted()
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var s = self
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return s
    }
}
