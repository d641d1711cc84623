import Foundation
import TermhostLoader
import TermhostRegistry
import TermhostRuntime

/// `termhost plugins list | info <id> | check <dir> | manifest <library>`. list and info read
/// manifests and the probe cache only: no plugin code runs. check and manifest probe the given
/// plugin in a child process.
enum PluginsCommand {
    static let usage = """
    usage: termhost plugins list              every plugin directory found, with its status
           termhost plugins info <id>         one plugin: manifest, library, hash, features
           termhost plugins check <dir>       validate a built plugin bundle; prints every problem
           termhost plugins manifest <library> [--output FILE]
                                              the manifest.json a built library declares (probed in a child)
           termhost plugins quarantine list   plugins kept out after a crash or hang, why and since when
           termhost plugins quarantine clear <id>  lift one (it is probed again on the next start)
           termhost plugins sign --key PRIVATE_KEY <plugin-set.json>
                                              sign a plugin set (writes plugin-set.json.sig, as ssh-keygen -Y sign)
           termhost plugins verify <plugin-set.json> [--allowed-signers FILE] [--revoked-signers FILE]
                                              check its signature as the loader does
    """

    static func run(_ args: [String], _ g: GlobalOptions) -> Int32 {
        guard let sub = args.first else { Output.err(usage); return ExitCode.usage }
        switch sub {
        case "list":
            let inspection = Inspection.run(g.runtimeOptions(), probe: false)
            let views = inspection.records.map(PluginView.init)
            if g.json { Output.json(views); return ExitCode.success }
            if views.isEmpty { Output.out("No plugins found. Search path: \(searchPathText(g))"); return ExitCode.success }
            Output.table(views.map { [$0.id ?? "?", $0.version ?? "?", $0.status, $0.origin, $0.directory] }, indent: "")
            for v in views where v.reason != nil { Output.out("\(v.label): \(v.reason!)") }
            return ExitCode.success
        case "info":
            guard args.count == 2 else { Output.err("usage: termhost plugins info <id>"); return ExitCode.usage }
            let inspection = Inspection.run(g.runtimeOptions(), probe: false)
            guard let record = inspection.records.first(where: { $0.manifest?.id == args[1] }) else {
                Output.err("termhost: no plugin with ID '\(args[1])' (see 'termhost plugins list')")
                return ExitCode.failure
            }
            return info(record, inspection, g)
        case "quarantine":
            return QuarantineCommand.run(Array(args.dropFirst()), g)
        case "manifest":
            return ManifestCommand.run(Array(args.dropFirst()), g)
        case "sign":
            return PluginSetSigningCommand.sign(Array(args.dropFirst()), g)
        case "verify":
            return PluginSetSigningCommand.verify(Array(args.dropFirst()), g)
        case "check":
            guard args.count == 2 else { Output.err("usage: termhost plugins check <plugin-directory>"); return ExitCode.usage }
            return check(args[1], g)
        default:
            Output.err("termhost plugins: unknown subcommand '\(sub)'\n\(usage)")
            return ExitCode.usage
        }
    }

    static func searchPathText(_ g: GlobalOptions) -> String {
        g.runtimeOptions().searchPath.entries.map(\.directory).joined(separator: ":")
    }

    static func info(_ record: PluginRecord, _ inspection: Inspection, _ g: GlobalOptions) -> Int32 {
        let view = PluginView(record)
        let features = inspection.resolution.features.filter { f in record.manifest!.features.contains { $0.id == f.descriptor.id } }
        if g.json {
            struct Info: Encodable { let plugin: PluginView; let abi: String; let features: [FeatureView] }
            Output.json(Info(plugin: view, abi: record.manifest!.abi, features: features.map { FeatureView($0, position: nil) }))
            return ExitCode.success
        }
        Output.out("\(view.label)")
        Output.table([["status", view.status + (view.reason.map { ": \($0)" } ?? "")],
                      ["directory", view.directory], ["origin", view.origin], ["abi", record.manifest!.abi],
                      ["library", view.library ?? "-"], ["sha256", view.sha256 ?? "(not computed)"],
                      ["probe", view.probe ?? "not probed yet"], ["load", Output.ms(view.loadMs)], ["init", Output.ms(view.initMs)]])
        Output.out("features:")
        for f in features {
            let commands = f.descriptor.commands.map(\.name)
            Output.out("  \(f.descriptor.id) \(f.descriptor.version) [\(f.descriptor.scope)] \(f.state.label)"
                       + (f.state.reason.map { ": \($0)" } ?? "")
                       + (commands.isEmpty ? "" : "; commands: \(commands.joined(separator: ", "))"))
        }
        return ExitCode.success
    }

    /// For plugin authors: every check the loader makes, plus export hygiene, on one bundle.
    static func check(_ dir: String, _ g: GlobalOptions) -> Int32 {
        let path = URL(fileURLWithPath: dir).standardizedFileURL.path
        var problems: [String] = []
        var notes: [String] = []
        var record = PluginCatalog.examine(path, origin: .environment)
        let catalog = PluginCatalog(records: [record], pluginSets: [], problems: [], searched: [])
        if let failure = record.failure {
            problems.append(failure.description)
        } else if let fd = Preflight.check(&record, catalog: catalog) {
            defer { close(fd) }
            if let elf = try? ELFFile(fd: fd) {
                problems += BundleReview.exportProblems(elf, library: record.libraryPath!,
                                                        actions: BundleReview.actionSymbols(record.manifest?.features ?? []))
                notes.append("library: \(record.libraryPath!) (\(elf.architecture), \(elf.usesSwiftRuntime ? "Swift" : "C"), sha256 \(record.sha256 ?? "?"))")
            }
            switch g.runtimeOptions().probe.probe(fd: fd, record: record) {
            case .passed(let report):
                notes.append("probe: entry, init, factory, each feature's create, activate, shutdown and destroy, and deinit ran cleanly (load \(Output.ms(report.loadMilliseconds)), init \(Output.ms(report.initMilliseconds)))")
                let review = BundleReview.features(record.manifest!, source: record.label)
                problems += review.problems
                notes += review.notes
            case .quarantined(let failure):
                problems.append(failure.description)
            }
        } else {
            problems.append(record.failure!.description)
        }
        if g.json {
            struct Check: Encodable { let directory: String; let ok: Bool; let problems: [String]; let notes: [String] }
            Output.json(Check(directory: path, ok: problems.isEmpty, problems: problems, notes: notes))
        } else {
            for n in notes { Output.out(n) }
            for p in problems { Output.out("problem: \(p)") }
            Output.out(problems.isEmpty ? "\(record.label): OK" : "\(record.label): \(problems.count) problem(s)")
        }
        return problems.isEmpty ? ExitCode.success : ExitCode.failure
    }
}
