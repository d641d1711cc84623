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

    /// Longest ID in UTF-8 bytes: IDs are keys of the store's namespace, file names in messages
    /// and JSON keys, and nobody needs more.
    public static let maxBytes = 200

    /// One pass over the UTF-8 bytes: this runs on every ID that crosses the ABI.
    public static func isValid(_ s: String) -> Bool {
        var labels = 0, labelLength = 0, total = 0
        for byte in s.utf8 {
            total += 1
            switch byte {
            case UInt8(ascii: "."):
                guard labelLength > 0 else { return false }
                labels += 1
                labelLength = 0
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                labelLength += 1
            case UInt8(ascii: "-"), UInt8(ascii: "_"):
                guard labelLength > 0 else { return false }   // a label starts with a letter or digit
                labelLength += 1
            default:
                return false
            }
        }
        return labelLength > 0 && labels >= 1 && total <= maxBytes
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

