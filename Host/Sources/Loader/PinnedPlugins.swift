import Foundation
import TermhostSDK

extension PluginCatalog {
    /// The labels (descriptor `source`s) of the plugins a distribution's plugin set pins and that
    /// passed its checks: listed in the set beside them, with the version and hash it names (a
    /// listed plugin that differs has a failure, so it is not pinned). The registry keeps their
    /// command names from plugins outside the set (FeatureRegistry.resolve(pinnedSources:)).
    public var pinnedSources: Set<String> {
        Set(records.compactMap { record in
            guard record.failure == nil, record.origin == .distribution || record.origin == .system,
                  let id = record.manifest?.id, let pin = pin(for: id),
                  pin.path == PathText.parent(record.directory) + "/plugin-set.json"
            else { return nil }
            return record.label
        })
    }
}
