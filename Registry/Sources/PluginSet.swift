import Foundation

/// A distributor's curated plugin set (`plugin-set.json` beside the plugins it names): the set's
/// name and version, and for each plugin its ID, version and the sha256 of its library. The
/// loader refuses a listed plugin whose version or hash differs, and `--safe-mode` loads only
/// plugins that an installed set names.
///
/// ```json
/// { "name": "termhost-default", "version": "2026.11",
///   "plugins": [ { "id": "org.termhost.hello-c", "version": "1.0.0", "sha256": "9f2c..." } ] }
/// ```
public struct PluginSet: Sendable, Equatable, Codable {
    public struct Entry: Sendable, Equatable, Codable {
        public var id: String
        public var version: String
        public var sha256: String

        public init(id: String, version: String, sha256: String) {
            self.id = id
            self.version = version
            self.sha256 = sha256.lowercased()
        }
    }

    public var name: String
    public var version: String
    public var plugins: [Entry]

    public init(name: String, version: String, plugins: [Entry]) {
        self.name = name
        self.version = version
        self.plugins = plugins
    }

    public func entry(for pluginID: String) -> Entry? { plugins.first { $0.id == pluginID } }

    public static func load(from path: String) throws(RegistryError) -> PluginSet {
        try decode(BoundedFile.read(path, cap: BoundedFile.pluginSetCap), file: path)
    }

    /// Validates plugin set bytes already read; `path` names them in errors.
    public static func decode(_ data: Data, file path: String) throws(RegistryError) -> PluginSet {
        var set = try JSONDocument.decode(PluginSet.self, from: data, file: path)
        set.plugins = set.plugins.map { Entry(id: $0.id, version: $0.version, sha256: $0.sha256) }
        var seen = Set<String>()
        for (i, p) in set.plugins.enumerated() {
            guard seen.insert(p.id).inserted else {
                throw .invalidDocument(file: path, field: "plugins[\(i)].id", detail: "plugin '\(p.id)' is listed twice")
            }
            let hex = p.sha256.lowercased()
            guard hex.count == 64, hex.allSatisfy({ $0.isHexDigit }) else {
                throw .invalidDocument(file: path, field: "plugins[\(i)].sha256", detail: "expected 64 hexadecimal digits")
            }
        }
        return set
    }
}
