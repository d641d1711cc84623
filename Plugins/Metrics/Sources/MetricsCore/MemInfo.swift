/// `/proc/meminfo`: "Key:   value kB" lines, in bytes.
public struct MemInfo: Sendable, Equatable {
    public var values: [String: UInt64]

    /// nil when not one line parsed.
    public static func parse<S: StringProtocol>(_ text: S) -> MemInfo? {
        var values: [String: UInt64] = [:]
        for line in ProcText.lines(text) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let f = ProcText.fields(line[line.index(after: colon)...])
            guard let first = f.first, let n = ProcText.counter(first) else { continue }
            let unit: UInt64 = f.count > 1 && f[1] == "kB" ? 1024 : 1
            let (bytes, overflow) = n.multipliedReportingOverflow(by: unit)
            if !overflow { values[String(line[..<colon])] = bytes }
        }
        return values.isEmpty ? nil : MemInfo(values: values)
    }

    public var total: UInt64? { values["MemTotal"] }
    /// MemAvailable exists since Linux 3.14; older kernels leave "used" unknown rather than
    /// guessing from free + buffers + cached.
    public var available: UInt64? { values["MemAvailable"] }
    public var swapTotal: UInt64? { values["SwapTotal"] }
    public var swapFree: UInt64? { values["SwapFree"] }
}
