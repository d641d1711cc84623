// fuzz-sources: Registry/Sources/BoundedFile.swift Registry/Sources/DeploymentPolicy.swift Registry/Sources/FeatureDescriptor.swift Registry/Sources/FeatureID.swift Registry/Sources/FeatureInstance.swift Registry/Sources/FeatureRegistry.swift Registry/Sources/FeatureScope.swift Registry/Sources/JSONDocument.swift Registry/Sources/JSONValue.swift Registry/Sources/Namespace.swift Registry/Sources/OrderResolver.swift Registry/Sources/PluginSet.swift Registry/Sources/RegistryError.swift Registry/Sources/ToolDescriptor.swift Registry/Sources/ToolSchema.swift SDK/Swift/TermhostSDK/JSONText.swift SDK/Swift/TermhostSDK/VisibleText.swift
// A distributor's plugin set (plugin-set.json) from any bytes: an accepted one names each
// plugin once, with a 64-digit lowercase sha256 that the loader can compare as it is.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let set = try? PluginSet.decode(Data(bytes: data, count: size), file: "plugin-set.json") else { return 0 }
    precondition(Set(set.plugins.map(\.id)).count == set.plugins.count, "a plugin listed twice")
    for p in set.plugins {
        precondition(p.sha256.count == 64 && p.sha256.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) },
                     "sha256 '\(p.sha256)'")
        precondition(set.entry(for: p.id) == p)
    }
    return 0
}
