/// A stable reverse-DNS feature ID such as `org.termhost.sftp`. IDs never change once shipped:
/// policies, plugin sets and stored settings refer to them.
public struct FeatureID: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    public let rawValue: String

    /// Accepts two or more dot-separated labels of `[a-z0-9-_]`, starting with a letter or digit.
    public init(_ rawValue: String) throws(RegistryError) {
        guard FeatureID.isValid(rawValue) else { throw .invalidID(rawValue) }
        self.rawValue = rawValue
    }

    /// For IDs known to be valid (tests, constants). Traps on an invalid ID: that is a bug.
    public init(checked rawValue: String) {
        precondition(FeatureID.isValid(rawValue), "invalid feature ID '\(rawValue)'")
        self.rawValue = rawValue
    }

    public static func isValid(_ s: String) -> Bool {
        let labels = s.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, s.utf8.count <= 200 else { return false }
        return labels.allSatisfy { label in
            guard let first = label.unicodeScalars.first, first.isIDStart else { return false }
            return label.unicodeScalars.allSatisfy { $0.isIDStart || $0 == "-" || $0 == "_" }
        }
    }

    public var description: String { rawValue }
    public static func < (a: FeatureID, b: FeatureID) -> Bool { a.rawValue < b.rawValue }

    public init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(String.self)
        do { try self.init(raw) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}

private extension Unicode.Scalar {
    var isIDStart: Bool { ("a"..."z").contains(self) || ("0"..."9").contains(self) }
}
