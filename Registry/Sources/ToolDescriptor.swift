/// A tool a feature offers to the assistant and to MCP clients (SDK/include/termhost/services/
/// tools.h, `termhost_tool_descriptor_t`), as the manifest carries it, so that `termhost tools`
/// lists it without running plugin code:
///
/// ```json
/// { "name": "hello_greet", "description": "...", "inputSchema": { "type": "object", ... },
///   "readOnly": true, "parallelSafe": true, "modes": ["planning", "acting"] }
/// ```
public struct ToolDescriptor: Hashable, Sendable, Codable {
    /// A run mode that may use the tool (TERMHOST_TOOL_MODE_*).
    public enum Mode: String, Hashable, Sendable, Codable, CaseIterable {
        case planning, acting
    }

    public var name: String
    public var description: String
    /// JSON Schema of the arguments; `ToolSchema.problem` says whether it is one the host can
    /// check (an object schema of the supported keywords).
    public var inputSchema: JSONValue
    public var readOnly: Bool
    public var parallelSafe: Bool
    /// Never empty: a descriptor's 0 ("every mode") is stored as both.
    public var modes: [Mode]

    public init(name: String, description: String, inputSchema: JSONValue, readOnly: Bool,
                parallelSafe: Bool = false, modes: [Mode] = Mode.allCases) {
        self.name = name
        self.description = description
        self.inputSchema = inputSchema
        self.readOnly = readOnly
        self.parallelSafe = parallelSafe
        self.modes = modes.isEmpty ? Mode.allCases : modes
    }

    /// Longest tool name in bytes (`[a-z][a-z0-9_]{0,63}`): providers' APIs cap names at 64.
    public static let maxNameBytes = 64

    /// A lowercase letter, then lowercase letters, digits and '_', at most 64 bytes in all.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first),
              bytes.count <= maxNameBytes else { return false }
        return bytes.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "_")
        }
    }

    /// Why the host refuses this tool (name, description, schema), or nil when it is usable.
    public var problem: String? {
        if !ToolDescriptor.isValidName(name) {
            return name.utf8.count > ToolDescriptor.maxNameBytes
                ? "its name is \(name.utf8.count) bytes, more than the \(ToolDescriptor.maxNameBytes) a tool name may have"
                : "its name is not a valid tool name (a lowercase letter, then lowercase letters, digits and '_')"
        }
        if description.allSatisfy(\.isWhitespace) { return "it has no description (the model chooses tools by it)" }
        if let schema = ToolSchema.problem(inputSchema) { return "its input_schema \(schema)" }
        return nil
    }
}
