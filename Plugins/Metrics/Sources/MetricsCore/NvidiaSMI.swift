/// The few fields read from `nvidia-smi -q -x` (XML). A scan for known tags, not an XML
/// parser: anything unexpected leaves that value unknown.
public struct GPU: Sendable, Equatable {
    public var name: String
    public var utilizationPercent: Double?
    public var memoryUsedBytes: Double?
    public var memoryTotalBytes: Double?
    public var temperatureCelsius: Double?
}

public enum NvidiaSMI {
    public static func parse(_ xml: String) -> [GPU] {
        xml.components(separatedBy: "<gpu ").dropFirst().map { block in
            let memory = section(block, "fb_memory_usage") ?? ""
            return GPU(name: value(block, "product_name") ?? "GPU",
                       utilizationPercent: number(section(block, "utilization").flatMap { value($0, "gpu_util") }),
                       memoryUsedBytes: mebibytes(number(value(memory, "used"))),
                       memoryTotalBytes: mebibytes(number(value(memory, "total"))),
                       temperatureCelsius: number(section(block, "temperature").flatMap { value($0, "gpu_temp") }))
        }
    }

    /// MiB to bytes; nil when the product is not finite (a value near Double's largest).
    static func mebibytes(_ v: Double?) -> Double? {
        guard let v else { return nil }
        let bytes = v * 1_048_576
        return bytes.isFinite ? bytes : nil
    }

    static func section(_ s: String, _ tag: String) -> String? {
        guard let a = s.range(of: "<\(tag)>"), let b = s.range(of: "</\(tag)>", range: a.upperBound..<s.endIndex) else { return nil }
        return String(s[a.upperBound..<b.lowerBound])
    }

    static func value(_ s: String, _ tag: String) -> String? { section(s, tag) }

    /// "1234 MiB", "45 %", "61 C" -> the number; "N/A" -> nil.
    static func number(_ s: String?) -> Double? {
        guard let first = s.flatMap({ ProcText.fields($0).first }) else { return nil }
        return ProcText.number(first)
    }
}

extension String {
    /// Foundation-free substring search (this module does not import Foundation).
    func range(of needle: String, range: Range<Index>? = nil) -> Range<Index>? {
        let hay = range.map { self[$0] } ?? self[...]
        guard !needle.isEmpty else { return nil }
        var i = hay.startIndex
        while i < hay.endIndex {
            if hay[i...].hasPrefix(needle) { return i..<index(i, offsetBy: needle.count) }
            i = hay.index(after: i)
        }
        return nil
    }

    func components(separatedBy separator: String) -> [String] {
        var parts: [String] = []
        var rest = self[...]
        while let r = String(rest).range(of: separator) {
            let s = String(rest)
            parts.append(String(s[..<r.lowerBound]))
            rest = s[r.upperBound...]
        }
        parts.append(String(rest))
        return parts
    }
}
