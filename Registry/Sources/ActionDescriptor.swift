/// A typed action a feature declares (SDK/include/termhost/action.h,
/// `termhost_action_descriptor_t`): an exported C function the host calls through libffi. The
/// manifest carries it, so `termhost actions` lists it without running plugin code:
///
/// ```json
/// { "name": "add-i32", "summary": "a + b", "symbol": "demo_add_i32",
///   "params": [ { "name": "a", "type": "int32", "description": "first addend" } ],
///   "result": "int32", "readOnly": true, "thread": "any", "takesError": false }
/// ```
public struct ActionDescriptor: Hashable, Sendable, Codable {
    /// A parameter or result type; the raw values are the manifest's spelling, the C values
    /// TERMHOST_ACTION_*.
    public enum ValueType: String, Hashable, Sendable, Codable, CaseIterable {
        case void, bool, int32, int64, uint32, uint64, double, string, bytes, json

        /// TERMHOST_ACTION_VOID ... TERMHOST_ACTION_JSON.
        public init?(code: UInt32) {
            let all: [ValueType] = [.void, .bool, .int32, .int64, .uint32, .uint64, .double, .string, .bytes, .json]
            guard code < all.count else { return nil }
            self = all[Int(code)]
        }

        /// Written through the host's value sink rather than returned.
        public var isSinkResult: Bool { self == .string || self == .bytes || self == .json }
    }

    public enum Thread: String, Hashable, Sendable, Codable {
        case main, any
    }

    public struct Param: Hashable, Sendable, Codable {
        public var name: String
        public var type: ValueType
        public var description: String

        public init(name: String, type: ValueType, description: String) {
            self.name = name
            self.type = type
            self.description = description
        }
    }

    public var name: String
    public var summary: String
    public var symbol: String
    public var params: [Param]
    public var result: ValueType
    public var readOnly: Bool
    public var thread: Thread
    public var takesError: Bool

    public init(name: String, summary: String, symbol: String, params: [Param], result: ValueType,
                readOnly: Bool, thread: Thread, takesError: Bool) {
        self.name = name
        self.summary = summary
        self.symbol = symbol
        self.params = params
        self.result = result
        self.readOnly = readOnly
        self.thread = thread
        self.takesError = takesError
    }

    /// TERMHOST_ACTION_MAX_PARAMS.
    public static let maxParams = 16
    public static let maxNameBytes = 64

    /// `[a-z][a-z0-9_-]{0,63}`.
    public static func isValidName(_ name: String) -> Bool { validWord(name, extra: [UInt8(ascii: "_"), UInt8(ascii: "-")]) }

    /// `[a-z][a-z0-9_]{0,63}` (a JSON key, and a word of a tool's schema).
    public static func isValidParamName(_ name: String) -> Bool { validWord(name, extra: [UInt8(ascii: "_")]) }

    /// A C identifier of at most 255 bytes.
    public static func isValidSymbol(_ symbol: String) -> Bool {
        let bytes = Array(symbol.utf8)
        guard let first = bytes.first, bytes.count < 256, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "_") }
    }

    /// Why the host refuses this declaration, or nil when it is usable.
    public var problem: String? {
        guard ActionDescriptor.isValidName(name) else { return "the name must match [a-z][a-z0-9_-]{0,63}" }
        guard !summary.isEmpty, !summary.contains("\n") else { return "the summary must be one non-empty line" }
        guard ActionDescriptor.isValidSymbol(symbol) else { return "the symbol '\(symbol)' is not a C identifier" }
        guard params.count <= ActionDescriptor.maxParams else { return "it declares \(params.count) parameters, more than \(ActionDescriptor.maxParams)" }
        var seen = Set<String>()
        for p in params {
            guard ActionDescriptor.isValidParamName(p.name) else { return "parameter '\(p.name)': the name must match [a-z][a-z0-9_]{0,63}" }
            guard seen.insert(p.name).inserted else { return "parameter '\(p.name)' is declared twice" }
            guard p.type != .void else { return "parameter '\(p.name)' has type void" }
        }
        return nil
    }

    private static func isAlphanumeric(_ b: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b)
    }

    private static func validWord(_ name: String, extra: Set<UInt8>) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first), bytes.count <= maxNameBytes else { return false }
        return bytes.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || extra.contains($0)
        }
    }
}
