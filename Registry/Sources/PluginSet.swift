import Foundation

/// A distributor's curated plugin set (`plugin-set.json` beside the plugins it names): the set's
/// name and version, and for each plugin its ID, version and the sha256 of its library, plus
/// any private shared libraries it loads (`libraries`, e.g. the staged libssh2). The loader
/// refuses a listed plugin whose version or hash differs, or whose pinned library is missing or
/// differs, and `--safe-mode` loads only plugins that an installed set names. `syncProvider`
/// (optional) names the plugin of the set that may use termhost.sync-store/1 (`SyncProviderChoice`).
///
/// ```json
/// { "name": "termhost-default", "version": "2026.11",
///   "plugins": [ { "id": "org.termhost.hello-c", "version": "1.0.0", "sha256": "9f2c..." },
///                { "id": "org.termhost.ssh", "version": "1.0.0", "sha256": "41d0...",
///                  "libraries": [ { "path": "../libssh2/libssh2.so.1", "sha256": "c7e1..." } ] } ],
///   "syncProvider": "org.termhost.sync" }
/// ```
public struct PluginSet: Sendable, Equatable, Codable {
    public struct Entry: Sendable, Equatable, Codable {
        public var id: String
        public var version: String
        public var sha256: String
        /// Shared libraries the plugin loads that ship with it; absent in the file means none.
        public var libraries: [Library]

        public init(id: String, version: String, sha256: String, libraries: [Library] = []) {
            self.id = id
            self.version = version
            self.sha256 = sha256.lowercased()
            self.libraries = libraries.map { Library(path: $0.path, sha256: $0.sha256) }
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(id: try c.decode(String.self, forKey: .id), version: try c.decode(String.self, forKey: .version),
                      sha256: try c.decode(String.self, forKey: .sha256),
                      libraries: try c.decodeIfPresent([Library].self, forKey: .libraries) ?? [])
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(version, forKey: .version)
            try c.encode(sha256, forKey: .sha256)
            if !libraries.isEmpty { try c.encode(libraries, forKey: .libraries) }
        }

        private enum CodingKeys: String, CodingKey { case id, version, sha256, libraries }
    }

    /// A private shared library a plugin loads by its soname (its `DT_NEEDED` entry), pinned
    /// like the plugin's own library. The loader opens `path`, checks its sha256 on the open
    /// descriptor and loads that descriptor before the plugin, so the plugin links to exactly
    /// these bytes whatever its `RUNPATH` says.
    public struct Library: Sendable, Equatable, Codable {
        /// Absolute, or relative to the directory holding plugin-set.json.
        public var path: String
        public var sha256: String

        public init(path: String, sha256: String) {
            self.path = path
            self.sha256 = sha256.lowercased()
        }

        /// The file this entry names, for a set read from `setPath`.
        public func resolvedPath(setPath: String) -> String {
            if path.hasPrefix("/") { return path }
            let dir = setPath.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            return (dir.isEmpty ? "." : dir) + "/" + path
        }
    }

    public var name: String
    public var version: String
    public var plugins: [Entry]
    /// The plugin ID the set names as the sync provider; nil when it names none.
    public var syncProvider: String?

    public init(name: String, version: String, plugins: [Entry], syncProvider: String? = nil) {
        self.name = name
        self.version = version
        self.plugins = plugins
        self.syncProvider = syncProvider
    }

    public func entry(for pluginID: String) -> Entry? { plugins.first { $0.id == pluginID } }

    public static func load(from path: String) throws(RegistryError) -> PluginSet {
        try decode(BoundedFile.read(path, cap: BoundedFile.pluginSetCap), file: path)
    }

    /// Validates plugin set bytes already read; `path` names them in errors.
    public static func decode(_ data: Data, file path: String) throws(RegistryError) -> PluginSet {
        let set = try JSONDocument.decode(PluginSet.self, from: data, file: path)
        // Only the syntax here: a set naming a plugin it does not list is still a usable set
        // (its pins hold); `SyncProviderChoice` then lends the sync store to nobody.
        if let provider = set.syncProvider, !FeatureID.isValid(provider) {
            throw .invalidDocument(file: path, field: "syncProvider", detail: "expected a plugin ID such as org.termhost.sync")
        }
        var seen = Set<String>()
        for (i, p) in set.plugins.enumerated() {
            guard seen.insert(p.id).inserted else {
                throw .invalidDocument(file: path, field: "plugins[\(i)].id", detail: "plugin '\(p.id)' is listed twice")
            }
            guard isDigest(p.sha256) else {
                throw .invalidDocument(file: path, field: "plugins[\(i)].sha256", detail: "expected 64 hexadecimal digits")
            }
            guard p.libraries.count <= maxLibraries else {
                throw .invalidDocument(file: path, field: "plugins[\(i)].libraries", detail: "at most \(maxLibraries) libraries per plugin")
            }
            var paths = Set<String>()
            for (j, library) in p.libraries.enumerated() {
                let field = "plugins[\(i)].libraries[\(j)]"
                if let problem = pathProblem(library.path) {
                    throw .invalidDocument(file: path, field: field + ".path", detail: problem)
                }
                guard paths.insert(library.path).inserted else {
                    throw .invalidDocument(file: path, field: field + ".path", detail: "'\(library.path)' is listed twice")
                }
                guard isDigest(library.sha256) else {
                    throw .invalidDocument(file: path, field: field + ".sha256", detail: "expected 64 hexadecimal digits")
                }
            }
        }
        return set
    }

    /// More than any plugin links privately; a bound on the files opened per plugin.
    public static let maxLibraries = 16

    /// Lowercased by the initializers, so only 0-9 and a-f pass.
    static func isDigest(_ hex: String) -> Bool {
        hex.utf8.count == 64 && hex.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// A library path is a file name the loader opens: not empty, no NUL, within PATH_MAX, not
    /// a directory (no trailing '/').
    static func pathProblem(_ path: String) -> String? {
        if path.isEmpty { return "expected a file path, absolute or relative to the plugin set's directory" }
        if path.utf8.contains(0) { return "the path contains a NUL byte" }
        if path.utf8.count > 4095 { return "the path is longer than 4095 bytes" }
        if path.hasSuffix("/") { return "'\(path)' names a directory, not a library" }
        return nil
    }
}
