/// Where a feature's instances live (NOTES §5). The raw values match `termhost_scope_t`.
public enum FeatureScope: Int32, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// One instance for the whole process: stores, queues, managers, samplers.
    case process = 0
    /// One instance per attached front end (a CLI invocation today).
    case scene = 1
    /// One instance per workspace; a workspace belongs to one scene and owns live sessions.
    case workspace = 2

    public var description: String {
        switch self {
        case .process: "process"
        case .scene: "scene"
        case .workspace: "workspace"
        }
    }

    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let scope = FeatureScope.allCases.first(where: { $0.description == name }) else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath,
                debugDescription: "unknown scope '\(name)' (expected process, scene or workspace)"))
        }
        self = scope
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
