import Foundation
import TermhostRegistry
import TermhostRuntime
import TermhostSDK
import TermhostServices

/// `termhost settings`: the user's synced settings (the store's `settings` collection, which
/// the sync provider carries to the user's other devices). `list` shows every effective setting
/// with its layer; `set` and `unset` edit the synced layer, refusing a key the operator's policy
/// does not let users set. No plugin code runs.
enum SettingsCommand {
    static let usage = """
    usage: termhost settings list [--json]
           termhost settings set FEATURE KEY JSON
           termhost settings unset FEATURE KEY
    The effective settings of the features, each with where it comes from (operator policy, user
    config, synced), and the user's synced settings, which follow the user to every device that
    syncs. Only keys the operator's policy lists in userOverridable can be set; the user config
    file of a device wins over a synced value there.
    """

    struct Row: Encodable {
        var feature: String
        var key: String
        var value: String
        /// policy, userConfig or synced.
        var layer: String
    }

    /// `list --json`: the effective settings, and the user settings ignored with the reason.
    struct Listing: Encodable {
        var settings: [Row]
        var ignored: [String]
    }

    static func run(_ args: [String], _ g: GlobalOptions) -> Int32 {
        switch (args.first, args.count) {
        case ("list"?, 1): return list(g)
        case ("set"?, 4): return edit(args[1], args[2], args[3], g)
        case ("unset"?, 3): return edit(args[1], args[2], nil, g)
        default:
            Output.err("termhost settings: expected list, set FEATURE KEY JSON or unset FEATURE KEY\n\(usage)")
            return ExitCode.usage
        }
    }

    static func list(_ g: GlobalOptions) -> Int32 {
        var inspection = Inspection.run(g.runtimeOptions(), probe: false)
        inspection.closeDescriptors()
        let p = inspection.policy
        var rows: [Row] = []
        let ids = Set(p.policy.settings.keys).union(p.user.settings.keys).union(p.synced.settings.keys).sorted()
        for raw in ids {
            guard let id = try? FeatureID(raw) else { continue }
            let keys = Set((p.policy.settings[raw] ?? [:]).keys).union((p.user.settings[raw] ?? [:]).keys)
                .union((p.synced.settings[raw] ?? [:]).keys).sorted()
            for key in keys {
                guard let (value, layer) = p.resolved(id, key) else { continue }
                rows.append(Row(feature: raw, key: key, value: value.description, layer: layer.rawValue))
            }
        }
        let ignored = p.problems(known: Set(ids.compactMap { try? FeatureID($0) })).filter {
            if case .settingNotOverridable = $0 { return true }
            if case .invalidDocument(let file, _, _) = $0 { return file == SyncedSettings.source }
            return false
        }.map(\.description)
        if g.json {
            Output.json(Listing(settings: rows, ignored: ignored))
            return ExitCode.success
        }
        if rows.isEmpty { Output.out("No settings: every feature uses its defaults.") }
        Output.table(rows.map { [$0.feature, $0.key, VisibleText.of($0.value), $0.layer] })
        for line in ignored { Output.err("termhost settings: \(VisibleText.of(line))") }
        return ExitCode.success
    }

    static func edit(_ feature: String, _ key: String, _ json: String?, _ g: GlobalOptions) -> Int32 {
        let name = json == nil ? "termhost settings unset" : "termhost settings set"
        guard let id = try? FeatureID(feature) else {
            Output.err("\(name): \(RegistryError.invalidID(feature).description)")
            return ExitCode.usage
        }
        guard !key.isEmpty else { Output.err("\(name): KEY is empty"); return ExitCode.usage }
        var value: JSONValue?
        if let json {
            do { value = try JSONDocument.decode(JSONValue.self, from: Data(json.utf8), file: "JSON") } catch {
                Output.err("\(name): \(error.description)")
                return ExitCode.usage
            }
        }
        let options = g.runtimeOptions()
        var inspection = Inspection.run(options, probe: false)
        inspection.closeDescriptors()
        if let error = inspection.policyErrors.first {
            Output.err("\(name): \(error.description)")
            return ExitCode.refusedToStart
        }
        // Unset is allowed for any key: it removes what a peer or an older policy left behind.
        if json != nil, !inspection.policy.overridable(id, key) {
            Output.err("\(name): \(inspection.policy.policy.source) does not let users set '\(VisibleText.of(key))' of feature '\(id)' (it is not in userOverridable)")
            return ExitCode.failure
        }
        do throws(StoreError) {
            try SyncedSettingsStore.write(try SQLiteStore(path: options.paths.store), feature: id, key: key, value: value)
        } catch {
            Output.err("\(name): \(error.message)")
            return ExitCode.failure
        }
        return ExitCode.success
    }
}
