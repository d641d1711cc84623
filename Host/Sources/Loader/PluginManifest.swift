import Foundation
#if canImport(TermhostRegistry)
import TermhostRegistry   // (absent when a fuzz target compiles this file with the Registry's sources)
#endif

/// `manifest.json` in a plugin directory: everything the host needs to list, order, enable and
/// check a plugin without running any of its code.
///
/// ```json
/// { "id": "org.termhost.examples.hello-c", "version": "1.0.0", "abi": "1.0",
///   "library": "libhello-c.so", "architecture": "x86_64", "sha256": "...",
///   "features": [ { "id": "org.termhost.examples.hello-c", "version": "1.0.0", "order": 1000,
///                   "scope": "process", "commands": [ { "name": "hello", "summary": "..." } ] } ] }
/// ```
public struct PluginManifest: Sendable, Equatable, Codable {
    public struct Feature: Sendable, Equatable, Codable {
        public var id: FeatureID
        public var version: String
        public var displayName: String?
        public var summary: String?
        public var order: Int32?
        public var scope: FeatureScope?
        public var after: [FeatureID]?
        public var before: [FeatureID]?
        public var requires: [FeatureID]?
        public var requiresServices: [String]?
        public var providesServices: [String]?
        public var commands: [CommandDescriptor]?
        /// ABI 1.3: the tools the feature offers; checked when features are resolved, where a
        /// bad one is refused by itself (`ToolDescriptor.problem`).
        public var tools: [ToolDescriptor]?
        /// ABI 1.3: typed actions; the probe checks each symbol is the library's own export.
        public var actions: [ActionDescriptor]?
        /// ABI 1.6: its commands may run at the same time as each other, in the daemon.
        public var concurrentCommands: Bool?
    }

    public var id: String
    public var version: String
    /// "MAJOR.MINOR" of the ABI the plugin was built against.
    public var abi: String
    /// File name of the shared library, inside the plugin directory.
    public var library: String
    /// ELF architecture ("x86_64", "aarch64"); checked against the library and the host.
    public var architecture: String?
    /// Optional pin of the library's sha256 (a plugin set may pin it too).
    public var sha256: String?
    public var features: [Feature]

    /// The ABI version as (major, minor), or nil when malformed.
    public var abiVersion: (major: UInt32, minor: UInt32)? {
        let parts = abi.split(separator: ".")
        guard parts.count == 2, let major = UInt32(parts[0]), let minor = UInt32(parts[1]) else { return nil }
        return (major, minor)
    }

    /// Reads (at most `BoundedFile.manifestCap` bytes of a regular file) and validates a
    /// manifest file; errors name the file and the field or position.
    public static func load(from path: String) throws(RegistryError) -> PluginManifest {
        try decode(BoundedFile.read(path, cap: BoundedFile.manifestCap), file: path)
    }

    /// Validates manifest bytes already read; `file` names them in errors.
    public static func decode(_ data: Data, file path: String) throws(RegistryError) -> PluginManifest {
        let m = try JSONDocument.decode(PluginManifest.self, from: data, file: path)
        guard FeatureID.isValid(m.id) else {
            throw .invalidDocument(file: path, field: "id", detail: RegistryError.invalidID(m.id).description)
        }
        guard m.abiVersion != nil else {
            throw .invalidDocument(file: path, field: "abi", detail: "expected \"MAJOR.MINOR\" such as \"1.0\", found \"\(m.abi)\"")
        }
        guard !m.library.isEmpty, !m.library.contains("/"), m.library != ".", m.library != ".." else {
            throw .invalidDocument(file: path, field: "library", detail: "expected a file name inside the plugin directory")
        }
        if let hash = m.sha256, hash.count != 64 || !hash.allSatisfy(\.isHexDigit) {
            throw .invalidDocument(file: path, field: "sha256", detail: "expected 64 hexadecimal digits")
        }
        guard !m.features.isEmpty else {
            throw .invalidDocument(file: path, field: "features", detail: "a plugin must declare at least one feature")
        }
        var seen = Set<FeatureID>()
        for (i, f) in m.features.enumerated() {
            guard Namespace.contains(m.id, f.id.rawValue) else {
                throw .invalidDocument(file: path, field: "features[\(i)].id",
                                       detail: RegistryError.featureOutsideNamespace(f.id, plugin: m.id, owner: nil).description)
            }
            guard seen.insert(f.id).inserted else {
                throw .invalidDocument(file: path, field: "features[\(i)].id", detail: "feature '\(f.id)' is declared twice")
            }
            for (j, service) in (f.providesServices ?? []).enumerated()
            where !Namespace.contains(m.id, Namespace.serviceName(service)) || Namespace.isHostService(service) {
                throw .invalidDocument(file: path, field: "features[\(i)].providesServices[\(j)]",
                                       detail: RegistryError.serviceOutsideNamespace(service, plugin: m.id).description)
            }
        }
        return m
    }

    /// Registry descriptors for the manifest's features; `source` names the plugin for errors.
    public func descriptors(source: String) -> [FeatureDescriptor] {
        features.map { f in
            FeatureDescriptor(id: f.id, version: f.version, displayName: f.displayName, summary: f.summary,
                              order: f.order ?? 0, scope: f.scope ?? .process, after: f.after ?? [],
                              before: f.before ?? [], requiresFeatures: f.requires ?? [],
                              requiresServices: f.requiresServices ?? [], providesServices: f.providesServices ?? [],
                              commands: f.commands ?? [], tools: f.tools ?? [], actions: f.actions ?? [],
                              concurrentCommands: f.concurrentCommands ?? false, source: source)
        }
    }
}
