// fuzz-sources: Registry/Sources/BoundedFile.swift Registry/Sources/DeploymentPolicy.swift Registry/Sources/FeatureDescriptor.swift Registry/Sources/FeatureID.swift Registry/Sources/FeatureInstance.swift Registry/Sources/FeatureRegistry.swift Registry/Sources/FeatureScope.swift Registry/Sources/JSONDocument.swift Registry/Sources/JSONValue.swift Registry/Sources/Namespace.swift Registry/Sources/OrderResolver.swift Registry/Sources/PluginSet.swift Registry/Sources/RegistryError.swift Registry/Sources/ToolDescriptor.swift Registry/Sources/ToolSchema.swift SDK/Swift/TermhostSDK/JSONText.swift SDK/Swift/TermhostSDK/VisibleText.swift SDK/Swift/TermhostSDK/PathText.swift Registry/Sources/ActionArguments.swift Registry/Sources/ActionDescriptor.swift Registry/Sources/ActionJSON.swift Registry/Sources/SyncedSettings.swift
// A distributor's plugin set (plugin-set.json) from any bytes: an accepted one names each
// plugin once, with a 64-digit lowercase sha256 that the loader can compare as it is, and each
// pinned library once per plugin (at most maxLibraries), by a non-empty path without NUL that
// resolves to a file name, with such a sha256 too; a sync provider, when named, is a plugin ID.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let set = try? PluginSet.decode(Data(bytes: data, count: size), file: "plugin-set.json") else { return 0 }
    precondition(Set(set.plugins.map(\.id)).count == set.plugins.count, "a plugin listed twice")
    precondition(set.syncProvider.map { (try? FeatureID($0)) != nil } ?? true, "sync provider '\(set.syncProvider!)'")
    func isDigest(_ hex: String) -> Bool {
        hex.utf8.count == 64 && hex.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
    for p in set.plugins {
        precondition(isDigest(p.sha256), "sha256 '\(p.sha256)'")
        precondition(set.entry(for: p.id) == p)
        precondition(p.libraries.count <= PluginSet.maxLibraries, "\(p.libraries.count) libraries")
        precondition(Set(p.libraries.map(\.path)).count == p.libraries.count, "a library listed twice")
        for library in p.libraries {
            precondition(isDigest(library.sha256), "library sha256 '\(library.sha256)'")
            precondition(!library.path.isEmpty && !library.path.utf8.contains(0) && !library.path.hasSuffix("/"), "library path '\(library.path)'")
            let resolved = library.resolvedPath(setPath: "/usr/share/termhost/plugins/plugin-set.json")
            // Bytes, not Characters: a path may begin with a combining mark, which joins the '/'
            // before it into one grapheme cluster, and String.hasSuffix compares those.
            precondition(resolved.hasPrefix("/") && Array(resolved.utf8).reversed().starts(with: Array(library.path.utf8).reversed()),
                         "'\(library.path)' resolved to '\(resolved)'")
        }
        // What the loader reads back from the set it wrote is the same set.
        if let data = try? JSONEncoder().encode(p) {
            precondition((try? JSONDecoder().decode(PluginSet.Entry.self, from: data)) == p, "entry does not round-trip")
        }
    }
    return 0
}
