import CTermhost

/// A typed action a feature declares (`termhost_action_descriptor_t`, termhost/action.h): an
/// exported C function the host calls through libffi with arguments already converted and
/// checked. In Swift the function is an `@_cdecl` top-level function whose parameters have the
/// C types of the declaration (`Int32`, `UInt64`, `Double`, `Bool`, `UnsafePointer<CChar>` for
/// string and JSON, `UnsafeRawPointer` and `Int` for bytes, then the sink and its user pointer
/// for a string, bytes or JSON result, then `UnsafeMutablePointer<termhost_error_t>` with
/// `takesError`). The library's version script must export `symbol` (see PluginGuide.md).
public struct Action: Sendable {
    /// A parameter or result type (TERMHOST_ACTION_*).
    public enum ValueType: UInt32, Sendable {
        case void = 0, bool, int32, int64, uint32, uint64, double, string, bytes, json
    }

    public struct Param: Sendable {
        public var name: String
        public var type: ValueType
        public var description: String
        public init(_ name: String, _ type: ValueType, _ description: String) {
            self.name = name
            self.type = type
            self.description = description
        }
    }

    public var name: String
    public var summary: String
    /// The `@_cdecl` name of the function.
    public var symbol: String
    public var params: [Param]
    public var result: ValueType
    public var readOnly: Bool
    /// Called on the main thread only (TERMHOST_ACTION_MAIN_THREAD) rather than on any thread.
    public var mainThreadOnly: Bool
    public var takesError: Bool

    public init(_ name: String, summary: String, symbol: String, params: [Param] = [], result: ValueType,
                readOnly: Bool = false, mainThreadOnly: Bool = false, takesError: Bool = false) {
        self.name = name
        self.summary = summary
        self.symbol = symbol
        self.params = params
        self.result = result
        self.readOnly = readOnly
        self.mainThreadOnly = mainThreadOnly
        self.takesError = takesError
    }

    /// A NULL-terminated array of C descriptors that live as long as the process, or NULL.
    static func descriptors(_ actions: [Action]) -> UnsafePointer<UnsafePointer<termhost_action_descriptor_t>?>? {
        guard !actions.isEmpty else { return nil }
        let list = UnsafeMutablePointer<UnsafePointer<termhost_action_descriptor_t>?>.allocate(capacity: actions.count + 1)
        for (i, a) in actions.enumerated() {
            let params = UnsafeMutablePointer<termhost_action_param_t>.allocate(capacity: max(a.params.count, 1))
            for (j, p) in a.params.enumerated() {
                params[j] = termhost_action_param_t(struct_size: UInt32(MemoryLayout<termhost_action_param_t>.size),
                                                    name: Immortal.string(p.name), type: p.type.rawValue,
                                                    description: Immortal.string(p.description))
            }
            let d = UnsafeMutablePointer<termhost_action_descriptor_t>.allocate(capacity: 1)
            d.initialize(to: termhost_action_descriptor_t(
                struct_size: UInt32(MemoryLayout<termhost_action_descriptor_t>.size), name: Immortal.string(a.name),
                summary: Immortal.string(a.summary), symbol: Immortal.string(a.symbol), params: UnsafePointer(params),
                param_count: UInt32(a.params.count), result: a.result.rawValue,
                flags: (a.readOnly ? TERMHOST_ACTION_READ_ONLY : 0) | (a.takesError ? TERMHOST_ACTION_TAKES_ERROR : 0),
                thread: a.mainThreadOnly ? TERMHOST_ACTION_MAIN_THREAD : TERMHOST_ACTION_ANY_THREAD))
            list[i] = UnsafePointer(d)
        }
        list[actions.count] = nil
        return UnsafePointer(list)
    }
}
