/// A CLI subcommand contributed by a feature (`termhost <name>`).
public struct CommandDescriptor: Hashable, Sendable, Codable {
    public var name: String
    public var summary: String
    public var usage: String?

    public init(name: String, summary: String, usage: String? = nil) {
        self.name = name
        self.summary = summary
        self.usage = usage
    }

    /// Longest command name in bytes: it is typed, and shown in one column of `termhost --help`.
    public static let maxNameBytes = 64

    /// One word of `[a-z0-9-]`, starting with a letter or digit, at most 64 bytes.
    public static func isValidName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first != UInt8(ascii: "-"), name.utf8.count <= maxNameBytes else { return false }
        return name.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-") }
    }
}

/// Everything the registry needs to know about a feature, read from a plugin manifest (without
/// running plugin code) or from the plugin's factory (in the probe). `source` says where it came
/// from so that errors can name it.
public struct FeatureDescriptor: Hashable, Sendable {
    public var id: FeatureID
    public var version: String
    public var displayName: String
    public var summary: String?
    public var order: Int32
    public var scope: FeatureScope
    /// Soft ordering: start after / before these features when they are present.
    public var after: [FeatureID]
    public var before: [FeatureID]
    /// Hard dependencies: missing or disabled means this feature is not created.
    public var requiresFeatures: [FeatureID]
    public var requiresServices: [String]
    public var providesServices: [String]
    public var commands: [CommandDescriptor]
    /// Tools for the assistant and MCP clients (ABI 1.3); honoured for process-scope features.
    public var tools: [ToolDescriptor]
    /// Typed actions, exported C functions called through libffi (ABI 1.3, action.h).
    public var actions: [ActionDescriptor]
    /// Its commands may run at the same time as each other (ABI 1.6, `concurrent_commands`).
    public var concurrentCommands: Bool
    /// Where the descriptor came from, e.g. "plugin org.example.hello (/path/to/plugin)".
    public var source: String

    public init(id: FeatureID, version: String = "1.0.0", displayName: String? = nil,
                summary: String? = nil, order: Int32 = 0, scope: FeatureScope = .process,
                after: [FeatureID] = [], before: [FeatureID] = [],
                requiresFeatures: [FeatureID] = [], requiresServices: [String] = [],
                providesServices: [String] = [], commands: [CommandDescriptor] = [],
                tools: [ToolDescriptor] = [], actions: [ActionDescriptor] = [], concurrentCommands: Bool = false, source: String) {
        self.id = id
        self.version = version
        self.displayName = displayName ?? id.rawValue
        self.summary = summary
        self.order = order
        self.scope = scope
        self.after = after
        self.before = before
        self.requiresFeatures = requiresFeatures
        self.requiresServices = requiresServices
        self.providesServices = providesServices
        self.commands = commands
        self.tools = tools
        self.actions = actions
        self.concurrentCommands = concurrentCommands
        self.source = source
    }
}
