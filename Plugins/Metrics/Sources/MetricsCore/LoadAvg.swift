/// `/proc/loadavg`: "0.56 0.68 0.63 1/85 32741".
public struct LoadAvg: Sendable, Equatable {
    public var one: Double, five: Double, fifteen: Double
    public var running: Int?, tasks: Int?

    public static func parse<S: StringProtocol>(_ text: S) -> LoadAvg? {
        let f = ProcText.fields(ProcText.lines(text).first ?? "")
        guard f.count >= 3, let a = ProcText.number(f[0]), let b = ProcText.number(f[1]), let c = ProcText.number(f[2]),
              a >= 0, b >= 0, c >= 0 else { return nil }
        var load = LoadAvg(one: a, five: b, fifteen: c)
        if f.count >= 4 {
            let rt = f[3].split(separator: "/")
            if rt.count == 2 { load.running = Int(rt[0]); load.tasks = Int(rt[1]) }
        }
        return load
    }
}

/// `/proc/uptime`'s first number: seconds since boot. The clock every rate is computed on,
/// so that our scheduling jitter and the network's delays do not skew rates.
public enum Uptime {
    public static func parse<S: StringProtocol>(_ text: S) -> Double? {
        guard let first = ProcText.fields(ProcText.lines(text).first ?? "").first,
              let v = ProcText.number(first), v >= 0 else { return nil }
        return v
    }
}
