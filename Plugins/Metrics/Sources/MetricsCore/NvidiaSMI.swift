/// The few fields read from `nvidia-smi -q -x` (XML). A scan for known tags, not an XML
/// parser: anything unexpected leaves that value unknown.
///
/// The text comes from the remote host (up to the frame's 4 MiB detail part), so the scan is
/// linear in it: slices of the one string, never copies of the rest per block, and at most
/// `maxGPUs` blocks (a machine has a few dozen at most).
public struct GPU: Sendable, Equatable {
    public var name: String
    public var utilizationPercent: Double?
    public var memoryUsedBytes: Double?
    public var memoryTotalBytes: Double?
    public var temperatureCelsius: Double?
}

public enum NvidiaSMI {
    public static let maxGPUs = 64

    public static func parse(_ xml: String) -> [GPU] {
        var gpus: [GPU] = []
        var rest = xml[...]
        guard let first = find("<gpu ", in: rest) else { return [] }
        rest = rest[first.upperBound...]
        while gpus.count < maxGPUs {
            let next = find("<gpu ", in: rest)
            let block = next.map { rest[..<$0.lowerBound] } ?? rest
            let memory = section(block, "fb_memory_usage") ?? ""
            gpus.append(GPU(name: value(block, "product_name").map(String.init) ?? "GPU",
                            utilizationPercent: number(section(block, "utilization").flatMap { value($0, "gpu_util") }),
                            memoryUsedBytes: mebibytes(number(value(memory, "used"))),
                            memoryTotalBytes: mebibytes(number(value(memory, "total"))),
                            temperatureCelsius: number(section(block, "temperature").flatMap { value($0, "gpu_temp") })))
            guard let next else { break }
            rest = rest[next.upperBound...]
        }
        return gpus
    }

    /// MiB to bytes; nil when the product is not finite (a value near Double's largest).
    static func mebibytes(_ v: Double?) -> Double? {
        guard let v else { return nil }
        let bytes = v * 1_048_576
        return bytes.isFinite ? bytes : nil
    }

    /// What lies between `<tag>` and the next `</tag>` in s.
    static func section(_ s: Substring, _ tag: String) -> Substring? {
        guard let a = find("<\(tag)>", in: s), let b = find("</\(tag)>", in: s[a.upperBound...]) else { return nil }
        return s[a.upperBound..<b.lowerBound]
    }

    static func value(_ s: Substring, _ tag: String) -> Substring? { section(s, tag) }

    /// "1234 MiB", "45 %", "61 C" -> the number; "N/A" -> nil.
    static func number(_ s: Substring?) -> Double? {
        guard let first = s.flatMap({ ProcText.fields($0).first }) else { return nil }
        return ProcText.number(first)
    }

    /// The first occurrence of needle in hay, compared byte by byte (Foundation-free: this
    /// module does not import Foundation). Needles here are short ASCII tags.
    static func find(_ needle: String, in hay: Substring) -> Range<Substring.Index>? {
        let n = Array(needle.utf8)
        guard let head = n.first else { return nil }
        let bytes = hay.utf8
        var i = bytes.startIndex
        while let start = bytes[i...].firstIndex(of: head) {
            var j = start, k = 0
            while k < n.count, j < bytes.endIndex, bytes[j] == n[k] { j = bytes.index(after: j); k += 1 }
            if k == n.count { return start..<j }
            i = bytes.index(after: start)
        }
        return nil
    }
}
