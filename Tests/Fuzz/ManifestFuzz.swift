// fuzz-sources: Host/Sources/Loader/PluginManifest.swift Registry/Sources/BoundedFile.swift Registry/Sources/DeploymentPolicy.swift Registry/Sources/FeatureDescriptor.swift Registry/Sources/FeatureID.swift Registry/Sources/FeatureInstance.swift Registry/Sources/FeatureRegistry.swift Registry/Sources/FeatureScope.swift Registry/Sources/JSONDocument.swift Registry/Sources/JSONValue.swift Registry/Sources/Namespace.swift Registry/Sources/OrderResolver.swift Registry/Sources/PluginSet.swift Registry/Sources/RegistryError.swift Registry/Sources/ToolDescriptor.swift Registry/Sources/ToolSchema.swift SDK/Swift/TermhostSDK/JSONText.swift SDK/Swift/TermhostSDK/VisibleText.swift SDK/Swift/TermhostSDK/PathText.swift Registry/Sources/ActionArguments.swift Registry/Sources/ActionDescriptor.swift Registry/Sources/ActionJSON.swift Registry/Sources/SyncedSettings.swift
// A plugin manifest (manifest.json) from any bytes: an accepted one keeps every rule the loader
// relies on before any plugin code runs (valid IDs, features and services inside the plugin's
// own namespace, a library name without a path, a well-formed ABI and hash), and its tools reach
// the catalog only when valid and offered by a process-scope feature.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    guard let m = try? PluginManifest.decode(bytes, file: "manifest.json") else { return 0 }
    precondition(FeatureID.isValid(m.id), "accepted plugin ID '\(m.id)'")
    precondition(m.abiVersion != nil)
    precondition(!m.library.isEmpty && !m.library.contains("/") && m.library != "." && m.library != "..", "library '\(m.library)'")
    precondition(m.sha256.map { $0.count == 64 && $0.allSatisfy(\.isHexDigit) } ?? true)
    precondition(!m.features.isEmpty)
    precondition(Set(m.features.map(\.id)).count == m.features.count, "a feature declared twice")
    for f in m.features {
        precondition(Namespace.contains(m.id, f.id.rawValue), "feature '\(f.id)' outside '\(m.id)'")
        for s in f.providesServices ?? [] {
            precondition(Namespace.contains(m.id, Namespace.serviceName(s)) && !Namespace.isHostService(s), "service '\(s)'")
        }
    }
    let descriptors = m.descriptors(source: "fuzz")
    precondition(descriptors.count == m.features.count)
    for (d, f) in zip(descriptors, m.features) { precondition(d.tools == (f.tools ?? []), "tools of '\(f.id)' changed") }
    var registry = FeatureRegistry()
    for d in descriptors { try? registry.register(d) }
    let resolution = registry.resolve(EffectivePolicy(), hostServices: [])
    _ = resolution.problems.map(\.description)
    // Only valid tools of process-scope features reach the catalog, one owner per name.
    for (tool, owner) in resolution.tools {
        precondition(tool.problem == nil && resolution.feature(owner)?.descriptor.scope == .process, "tool '\(tool.name)' offered")
    }
    return 0
}
