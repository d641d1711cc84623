// fuzz-sources: Registry/Sources/BoundedFile.swift Registry/Sources/DeploymentPolicy.swift Registry/Sources/FeatureDescriptor.swift Registry/Sources/FeatureID.swift Registry/Sources/FeatureInstance.swift Registry/Sources/FeatureRegistry.swift Registry/Sources/FeatureScope.swift Registry/Sources/JSONDocument.swift Registry/Sources/JSONValue.swift Registry/Sources/Namespace.swift Registry/Sources/OrderResolver.swift Registry/Sources/PluginSet.swift Registry/Sources/RegistryError.swift Registry/Sources/ToolDescriptor.swift Registry/Sources/ToolSchema.swift SDK/Swift/TermhostSDK/JSONText.swift SDK/Swift/TermhostSDK/VisibleText.swift SDK/Swift/TermhostSDK/PathText.swift Registry/Sources/ActionArguments.swift Registry/Sources/ActionDescriptor.swift Registry/Sources/ActionJSON.swift Registry/Sources/SyncedSettings.swift
// The operator's policy, the user's config and a synced settings record from any bytes (a
// record is what another device sent: never fatal, accepted only as a JSON object under a valid
// feature ID, else reported by its key). An accepted policy names only
// valid feature IDs, and everything the host derives from it (states, settings handed to
// plugins as JSON text, problems) is computed without trapping, whatever its numbers.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    let user = (try? JSONDocument.decode(UserConfig.self, from: bytes, file: "config.json")) ?? UserConfig()
    let synced = SyncedSettings.decode([(key: "org.fuzz.feature", value: Array(bytes))])
    precondition(synced.settings.count + synced.rejected.count == 1, "one record, one outcome")
    guard let policy = try? DeploymentPolicy.decode(bytes, file: "policy.json") else { return 0 }
    for key in policy.settings.keys { precondition(FeatureID.isValid(key), "settings key '\(key)'") }
    for key in policy.userOverridable.keys { precondition(FeatureID.isValid(key), "userOverridable key '\(key)'") }
    let effective = EffectivePolicy(policy: policy, user: user, synced: synced)
    var known = Set(policy.enable + policy.disable + policy.require)
    known.insert(FeatureID(checked: "org.fuzz.feature"))
    for id in known {
        _ = effective.disabledReason(id)
        for (key, value) in effective.settings(for: id) {
            let text = value.description
            precondition(!text.isEmpty, "setting '\(key)'")
            precondition(effective.setting(id, key) != nil)
        }
    }
    _ = effective.problems(known: known).map(\.description)
    return 0
}
