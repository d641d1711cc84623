import Foundation
import TermhostLoader
import TermhostRegistry
import TermhostRuntime
import TermhostServices

/// `termhost doctor`: what was examined, what loads and what does not and why, load times,
/// quarantines, the policy in force, and the state of the store. Plugin code runs only in the
/// probe's child process, never in this one. Exit status 1 when it found problems.
enum DoctorCommand {
    struct Report: Encodable {
        var searchPath: [[String: String]]
        var pluginSets: [String]
        /// Who signed each signed set, by the set's path: principals, key type and fingerprint.
        var pluginSetSigners: [String: PluginSetSigner]
        /// Who may use termhost.sync-store/1 and which file said so.
        var syncProvider: SyncProviderChoice
        var plugins: [PluginView]
        var features: [FeatureView]
        var policy: [String: String]
        var problems: [String]
        var store: [String: String]
    }

    static func run(_ g: GlobalOptions) -> Int32 {
        let options = g.runtimeOptions()
        // A plugin that crashed the previous run is quarantined first, and shown so below.
        for line in CrashQuarantine.handlePreviousCrashes(options.paths) { Output.err(line) }
        let store = storeStatus(options.paths)
        var inspection = Inspection.run(options, probe: true)
        inspection.closeDescriptors()
        var problems = inspection.catalog.problems + inspection.policyErrors.map(\.description)
            + inspection.duplicates.map(\.description) + inspection.resolution.problems.map(\.description)
            + inspection.resolution.fatal.map(\.description)
        if let p = store.problem { problems.append(p) }
        if let p = inspection.syncProvider.problem { problems.append(p) }
        problems += ReplacedRefusals.lines(inspection.records)
        let plugins = inspection.records.map(PluginView.init)
        problems += plugins.filter { $0.status == "quarantined" || $0.status == "rejected" }.map { "\($0.label): \($0.reason!)" }
        let p = inspection.policy
        let signers = p.policy.signerFiles(policyPath: options.paths.operatorPolicy)
        let policy: [String: String] = [
            "operatorPolicy": fileState(options.paths.operatorPolicy, absent: "absent: built-in defaults"),
            "userConfig": fileState(options.paths.userConfig, absent: "absent"),
            "default": p.policy.default.rawValue,
            "disabled": (p.policy.disable.map(\.rawValue) + p.user.disable.map { "\($0.rawValue) (by user)" }).joined(separator: ", "),
            "required": p.policy.require.map(\.rawValue).joined(separator: ", "),
            "safeMode": g.safeMode ? "on: only plugins of an installed plugin set load" : "off",
            "signedPluginSets": (p.policy.requireSignedPluginSets ? "required" : "checked when signed, unsigned allowed")
                + "; allowed signers \(fileState(signers.allowed, absent: "absent")), revoked \(fileState(signers.revoked, absent: "absent"))",
        ]
        let report = Report(
            searchPath: inspection.catalog.searched.map { ["directory": $0.entry.directory, "origin": $0.entry.origin.rawValue, "found": $0.note] },
            pluginSets: inspection.catalog.pluginSets.map { "\($0.set.name) \($0.set.version) (\($0.path), \($0.set.plugins.count) plugin\($0.set.plugins.count == 1 ? "" : "s")), "
                + (inspection.catalog.pluginSetSigners[$0.path].map { "signed by \($0.description)" } ?? "unsigned") },
            pluginSetSigners: inspection.catalog.pluginSetSigners, syncProvider: inspection.syncProvider,
            plugins: plugins, features: FeatureView.all(inspection.resolution), policy: policy, problems: problems,
            store: ["path": options.paths.store, "status": store.problem ?? store.state,
                    "secrets": options.paths.secrets, "log": options.paths.log ?? "-"])
        if g.json { Output.json(report); return problems.isEmpty ? ExitCode.success : ExitCode.failure }

        Output.out("Termhost \(TermhostVersion.string) doctor")
        Output.out("\nSearch path (first match wins):")
        Output.table(report.searchPath.map { [$0["origin"]!, $0["directory"]!, $0["found"]!] })
        Output.out(report.pluginSets.isEmpty ? "\nPlugin sets: none installed" : "\nPlugin sets:")
        for s in report.pluginSets { Output.out("  \(s)") }
        Output.out("\nSync provider: \(report.syncProvider.plugin ?? "none, the sync store is lent to no plugin") (\(report.syncProvider.source))")
        Output.out("\nPlugins:")
        if plugins.isEmpty { Output.out("  none found") }
        Output.table(plugins.map { v in
            [v.status == "ok" ? "✓" : "✗", v.label, v.status, "probe \(v.probe ?? "-")", "load \(Output.ms(v.loadMs))", "init \(Output.ms(v.initMs))"]
        })
        for v in plugins where v.reason != nil { Output.out("  \(v.label): \(v.reason!)") }
        Output.out("\nFeatures (start order):")
        Output.table(report.features.map { f in
            [f.position.map(String.init) ?? "-", f.id, f.state, f.reason ?? ""]
        })
        Output.out("\nPolicy in force:")
        Output.table(policy.keys.sorted().map { [$0, policy[$0]!.isEmpty ? "(none)" : policy[$0]!] })
        Output.out("\nStore:")
        Output.table(report.store.keys.sorted().map { [$0, report.store[$0]!] })
        Output.out(problems.isEmpty ? "\nNo problems found." : "\n\(problems.count) problem(s):")
        for p in problems { Output.out("  - \(p)") }
        return problems.isEmpty ? ExitCode.success : ExitCode.failure
    }

    /// "path", "path (absent: ...)" or "path (unreadable: reason)".
    static func fileState(_ path: String, absent: String) -> String {
        var st = stat()
        if stat(path, &st) == 0 { return access(path, R_OK) == 0 ? path : "\(path) (unreadable: \(String(cString: strerror(errno))))" }
        return errno == ENOENT || errno == ENOTDIR ? "\(path) (\(absent))" : "\(path) (unreadable: \(String(cString: strerror(errno))))"
    }

    /// Whether the store is usable, read-only (doctor never creates or migrates it).
    static func storeStatus(_ paths: HostPaths) -> (problem: String?, state: String) {
        if let problem = SQLiteStore.diagnose(path: paths.store) { return (problem, "") }
        return (nil, FileManager.default.fileExists(atPath: paths.store) ? "ok" : "not created yet (the first start creates it)")
    }
}

/// `termhost features`: every feature in start order with its state and the reason.
enum FeaturesCommand {
    static func run(_ g: GlobalOptions) -> Int32 {
        var inspection = Inspection.run(g.runtimeOptions(), probe: true)
        inspection.closeDescriptors()
        let views = FeatureView.all(inspection.resolution)
        if g.json { Output.json(views); return ExitCode.success }
        if views.isEmpty {
            Output.out(inspection.records.isEmpty ? "No features: no plugins were found (see 'termhost doctor')."
                                                  : "No features: no plugin could be used (see 'termhost doctor').")
            return ExitCode.success
        }
        Output.table([["#", "FEATURE", "VERSION", "SCOPE", "STATE", "COMMANDS"]] + views.map { f in
            [f.position.map(String.init) ?? "-", f.id, f.version, f.scope, f.state, f.commands.joined(separator: ",")]
        }, indent: "")
        for f in views where f.reason != nil { Output.out("\(f.id): \(f.reason!)") }
        for p in inspection.duplicates + inspection.resolution.problems { Output.out("warning: \(p)") }
        return ExitCode.success
    }
}
