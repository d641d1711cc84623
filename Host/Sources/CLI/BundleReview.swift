import TermhostLoader
import TermhostRegistry
import TermhostRuntime

/// The checks `plugins check` and `plugins manifest` both make beyond the loader's own: export
/// hygiene, and whether the plugin's features resolve on their own.
enum BundleReview {
    /// A plugin that exports more than its entry (and the functions of the typed actions it
    /// declares, `actions`) can bind other images' symbols to its own.
    static func exportProblems(_ elf: ELFFile, library: String, actions: Set<String> = []) -> [String] {
        var problems: [String] = []
        let extra = elf.exportedSymbols.filter { $0 != "termhost_plugin_entry" && !actions.contains($0) }
        if !elf.exportedSymbols.contains("termhost_plugin_entry") {
            problems.append("\(library) does not export termhost_plugin_entry")
        }
        if !extra.isEmpty {
            problems.append("\(library) exports \(extra.count) symbol(s) besides termhost_plugin_entry (e.g. \(extra.prefix(3).joined(separator: ", "))); link with a version script that exports only the entry and the declared actions' functions (Docs/PluginGuide.md)")
        }
        return problems
    }

    /// The C functions a manifest's typed actions name.
    static func actionSymbols(_ features: [PluginManifest.Feature]) -> Set<String> {
        Set(features.flatMap { ($0.actions ?? []).map(\.symbol) })
    }

    /// Registers the manifest's features alone under the default policy. A dependency or service
    /// that another plugin may provide is a note; anything else that keeps a feature off is a problem.
    static func features(_ manifest: PluginManifest, source: String) -> (problems: [String], notes: [String]) {
        var problems: [String] = []
        var notes: [String] = []
        var registry = FeatureRegistry()
        for d in manifest.descriptors(source: source) {
            do { try registry.register(d) } catch { problems.append("\(error)") }
        }
        let resolution = registry.resolve(EffectivePolicy(), hostServices: HostServices.hostServiceIDs,
                                          reservedCommands: HostRuntime.builtInCommands)
        problems += resolution.problems.map(\.description)
        for f in resolution.features where f.state != .enabled {
            if case .unavailable(.missingDependency) = f.state {
                notes.append("feature \(f.descriptor.id) needs a feature from another plugin: \(f.state.reason!)")
            } else if case .unavailable(.missingService) = f.state {
                notes.append("feature \(f.descriptor.id): \(f.state.reason!) (it may come from another plugin)")
            } else {
                problems.append(f.state.reason!)
            }
        }
        return (problems, notes)
    }
}
