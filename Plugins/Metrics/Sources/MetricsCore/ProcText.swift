/// Small helpers for procfs text: whitespace fields and lenient numbers. Every parser in this
/// module treats its input as untrusted (a remote host, maybe truncated mid-line): a line that
/// does not have the fields it needs is skipped, never trusted half-way, and nothing traps.
enum ProcText {
    /// Fields split on spaces and tabs, empty fields dropped.
    static func fields<S: StringProtocol>(_ line: S) -> [Substring] {
        line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { Substring($0) }
    }

    static func lines<S: StringProtocol>(_ text: S) -> [Substring] {
        text.split(separator: "\n", omittingEmptySubsequences: true).map { Substring($0) }
    }

    /// A non-negative integer counter, or nil for anything else ("-", "1e3", overflow).
    static func counter<S: StringProtocol>(_ s: S) -> UInt64? { UInt64(s) }

    /// a + b, saturated: counters from a remote host may be anything up to 2^64-1, and a
    /// wrapped sum would look like a small, plausible value.
    static func sum(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (s, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : s
    }

    /// A finite decimal number, or nil.
    static func number<S: StringProtocol>(_ s: S) -> Double? {
        guard let d = Double(String(s)), d.isFinite else { return nil }
        return d
    }
}
