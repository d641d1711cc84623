import TermhostSDK

/// A JSON value with ordered keys, written by hand so that unknown values are an explicit
/// null (Codable's synthesized encoders drop nil keys) and non-finite numbers never appear.
public indirect enum JSON: Sendable, Equatable {
    case null, bool(Bool), number(Double), string(String), array([JSON]), object([(String, JSON)])

    public static func == (a: JSON, b: JSON) -> Bool { a.text == b.text }

    /// A number, or null when unknown or not finite.
    public static func num(_ d: Double?) -> JSON { d.map { $0.isFinite ? .number($0) : .null } ?? .null }
    public static func int(_ i: Int?) -> JSON { i.map { .number(Double($0)) } ?? .null }
    public static func str(_ s: String?) -> JSON { s.map { .string($0) } ?? .null }

    public var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let d):
            if d == d.rounded(), abs(d) < 1e15 { out += String(Int64(d)) } else { out += "\(d)" }
        case .string(let s): JSONText.quote(s, into: &out)
        case .array(let items):
            out += "["
            for (i, v) in items.enumerated() { if i > 0 { out += "," }; v.write(to: &out) }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, (k, v)) in members.enumerated() {
                if i > 0 { out += "," }
                JSONText.quote(k, into: &out)
                out += ":"
                v.write(to: &out)
            }
            out += "}"
        }
    }
}

/// Wall-clock seconds since 1970 as RFC 3339 UTC ("2026-11-29T14:31:58.250Z"), without
/// Foundation (this module stays Foundation-free so its string helpers cannot clash).
public func rfc3339(_ t: Double) -> String {
    let ms = Int64((t * 1000).rounded())
    let secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
    let days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400
    let rem = secs - days * 86400
    // Howard Hinnant's civil_from_days.
    let z = days + 719468
    let era = (z >= 0 ? z : z - 146096) / 146097
    let doe = z - era * 146097
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
    func p(_ v: Int64, _ w: Int) -> String { let s = String(v); return String(repeating: "0", count: max(0, w - s.count)) + s }
    return "\(p(y, 4))-\(p(m, 2))-\(p(d, 2))T\(p(rem / 3600, 2)):\(p(rem / 60 % 60, 2)):\(p(rem % 60, 2)).\(p(ms - secs * 1000, 3))Z"
}
