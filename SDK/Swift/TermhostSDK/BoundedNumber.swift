/// Numbers from outside (a command-line option, a settings value, an environment variable, a
/// line of a config file) checked where they enter, so arithmetic on them later cannot trap.
///
/// Design: Swift traps on overflow, and a trap in a plugin ends the whole host. Every number a
/// user, a file or a server supplies therefore goes through one of these parsers, which name the
/// setting and its range in the error, the way OpenSSH's `convtime` and `a2port` callers do:
/// `--keepalive must be a whole number of seconds from 0 to 86400, not '5000000000'`.
///
/// This file uses nothing but the standard library, so fuzz targets compile it as it is.
public struct NumberOutOfRange: Error, Equatable, CustomStringConvertible {
    /// What the number is, as the user wrote it: `--keepalive`, `TERMHOST_PROBE_TIMEOUT`,
    /// `connectTimeout in policy.json`.
    public let name: String
    /// What the user wrote (shown with control characters made visible).
    public let text: String
    /// "a whole number from 1 to 65535", "a number of seconds from 0.1 to 600".
    public let expected: String

    public init(name: String, text: String, expected: String) {
        self.name = name
        self.text = text
        self.expected = expected
    }

    public var description: String { "\(name) must be \(expected), not '\(VisibleText.of(text))'" }
}

public enum BoundedNumber {
    /// A whole decimal number in `range` (an optional leading sign, digits only: no spaces,
    /// no hex, no exponent). `unit` is added to the message: "a whole number of seconds".
    public static func integer(_ text: String, name: String, in range: ClosedRange<Int>,
                               unit: String? = nil) throws(NumberOutOfRange) -> Int {
        let expected = "a whole number\(unit.map { " of \($0)" } ?? "") from \(range.lowerBound) to \(range.upperBound)"
        guard let value = Int(text), range.contains(value) else {
            throw NumberOutOfRange(name: name, text: text, expected: expected)
        }
        return value
    }

    /// A finite decimal number in `range` (NaN and infinities are refused).
    public static func decimal(_ text: String, name: String, in range: ClosedRange<Double>,
                               unit: String? = nil) throws(NumberOutOfRange) -> Double {
        let expected = "a number\(unit.map { " of \($0)" } ?? "") from \(format(range.lowerBound)) to \(format(range.upperBound))"
        guard text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2e || $0 == 0x2d || $0 == 0x2b }),
              let value = Double(text), value.isFinite, range.contains(value) else {
            throw NumberOutOfRange(name: name, text: text, expected: expected)
        }
        return value
    }

    /// A value already decoded (a JSON number, a C integer from another plugin) checked the
    /// same way.
    public static func check<T: BinaryInteger>(_ value: T, name: String, in range: ClosedRange<Int>,
                                               unit: String? = nil) throws(NumberOutOfRange) -> Int {
        guard let v = Int(exactly: value), range.contains(v) else {
            throw NumberOutOfRange(name: name, text: String(value),
                                   expected: "a whole number\(unit.map { " of \($0)" } ?? "") from \(range.lowerBound) to \(range.upperBound)")
        }
        return v
    }

    private static func format(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
    }
}
