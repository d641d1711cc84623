/// A strict parser of the Prometheus text exposition format 0.0.4, for checking what
/// `metrics serve` writes: every line must be a HELP, a TYPE or a sample; names and labels
/// must match the format's grammar; each family has exactly one HELP and one TYPE, before its
/// samples, and its samples are contiguous; no series appears twice; values are numbers; the
/// text ends with a newline. Any deviation throws with the line number.
struct PrometheusText {
    struct Sample: Equatable { var name: String; var labels: [String: String]; var value: Double }
    struct Family { var help: String?; var type: String?; var samples: [Sample] = [] }
    struct Invalid: Error, CustomStringConvertible { let description: String }

    var families: [String: Family] = [:]
    var order: [String] = []

    static func parse(_ text: String) throws -> PrometheusText {
        var out = PrometheusText()
        guard text.isEmpty || text.hasSuffix("\n") else { throw Invalid(description: "the text does not end with a newline") }
        var closed: Set<String> = []
        var current: String? = nil
        var seen: Set<String> = []
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().enumerated() {
            let n = i + 1
            let line = String(raw)
            func fail(_ why: String) -> Invalid { Invalid(description: "line \(n): \(why): \(line)") }
            if line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
                guard parts.count >= 3, parts[0] == "#", parts[1] == "HELP" || parts[1] == "TYPE" else { throw fail("a comment that is neither HELP nor TYPE") }
                let name = parts[2]
                guard isMetricName(name) else { throw fail("bad metric name") }
                guard !closed.contains(name) else { throw fail("family \(name) continues after another family") }
                if current != name, let c = current { closed.insert(c) }
                current = name
                var f = out.families[name] ?? { out.order.append(name); return Family() }()
                guard f.samples.isEmpty else { throw fail("\(parts[1]) after samples") }
                let rest = parts.count > 3 ? parts[3] : ""
                if parts[1] == "HELP" {
                    guard f.help == nil else { throw fail("second HELP") }
                    guard !rest.isEmpty else { throw fail("empty HELP") }
                    f.help = rest
                } else {
                    guard f.type == nil else { throw fail("second TYPE") }
                    guard ["counter", "gauge", "histogram", "summary", "untyped"].contains(rest) else { throw fail("unknown TYPE") }
                    f.type = rest
                }
                out.families[name] = f
                continue
            }
            guard !line.isEmpty else { throw fail("empty line") }
            let sample = try parseSample(line, fail)
            guard var f = out.families[sample.name], f.help != nil, f.type != nil else { throw fail("sample before its HELP and TYPE") }
            guard current == sample.name, !closed.contains(sample.name) else { throw fail("samples of \(sample.name) are not contiguous") }
            let key = sample.name + "{" + sample.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + "}"
            guard seen.insert(key).inserted else { throw fail("duplicate series") }
            f.samples.append(sample)
            out.families[sample.name] = f
        }
        for (name, f) in out.families where f.help == nil || f.type == nil { throw Invalid(description: "family \(name) lacks HELP or TYPE") }
        return out
    }

    static func isMetricName(_ s: String) -> Bool {
        guard let first = s.first, first.isASCII, first.isLetter || first == "_" || first == ":" else { return false }
        return s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
    }

    static func isLabelName(_ s: String) -> Bool {
        guard let first = s.first, first.isASCII, first.isLetter || first == "_", !s.hasPrefix("__") else { return false }
        return s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }

    static func parseSample(_ line: String, _ fail: (String) -> Invalid) throws -> Sample {
        var chars = Array(line)[...]
        var name = ""
        while let c = chars.first, c != "{" && c != " " { name.append(c); chars.removeFirst() }
        guard isMetricName(name) else { throw fail("bad metric name") }
        var labels: [String: String] = [:]
        if chars.first == "{" {
            chars.removeFirst()
            while chars.first != "}" {
                var label = ""
                while let c = chars.first, c != "=" { label.append(c); chars.removeFirst() }
                guard isLabelName(label), chars.popFirst() == "=", chars.popFirst() == "\"" else { throw fail("bad label") }
                var value = ""
                while true {
                    guard let c = chars.popFirst() else { throw fail("unterminated label value") }
                    if c == "\"" { break }
                    if c == "\\" {
                        switch chars.popFirst() {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: throw fail("bad escape in label value")
                        }
                    } else if c == "\n" { throw fail("newline in label value") } else { value.append(c) }
                }
                guard labels.updateValue(value, forKey: label) == nil else { throw fail("label \(label) twice") }
                if chars.first == "," { chars.removeFirst() } else if chars.first != "}" { throw fail("expected , or }") }
            }
            chars.removeFirst()
        }
        guard chars.popFirst() == " " else { throw fail("expected one space before the value") }
        let fields = String(chars).split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 1 || fields.count == 2, let value = parseValue(String(fields[0])) else { throw fail("bad value") }
        if fields.count == 2 { guard Int64(fields[1]) != nil else { throw fail("bad timestamp") } }
        return Sample(name: name, labels: labels, value: value)
    }

    static func parseValue(_ s: String) -> Double? {
        switch s {
        case "NaN": return .nan
        case "+Inf": return .infinity
        case "-Inf": return -.infinity
        default:
            guard !s.isEmpty, s.allSatisfy({ "0123456789.eE+-".contains($0) }) else { return nil }
            return Double(s)
        }
    }

    /// The value of the one sample of name with these labels, or nil.
    func value(_ name: String, _ labels: [String: String]) -> Double? {
        families[name]?.samples.first { $0.labels == labels }?.value
    }
}
