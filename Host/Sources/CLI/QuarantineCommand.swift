import Foundation
import TermhostLoader
import TermhostRegistry
import TermhostRuntime
import TermhostSDK

/// `termhost plugins quarantine list | clear <id>`: the plugins kept out because they crashed,
/// hung or misbehaved in the probe or crashed a host process (recorded by the fatal-signal
/// recorder, see CrashMarker), and lifting one. A quarantine lives in the probe cache, keyed by
/// the library's path and sha256: it ends by itself when the file changes, or with `clear`.
enum QuarantineCommand {
    static let usage = "usage: termhost plugins quarantine list | clear <plugin-id>"

    struct Item: Encodable {
        let id: String
        let library: String
        let sha256: String
        let reason: String
        let since: String
    }

    static func run(_ args: [String], _ g: GlobalOptions) -> Int32 {
        let options = g.runtimeOptions()
        // A crash of the previous run is turned into its quarantine first, so it is listed.
        for line in CrashQuarantine.handlePreviousCrashes(options.paths) { Output.err(line) }
        switch (args.first, args.count) {
        case ("list"?, 1):
            let items = quarantined(options)
            if g.json { Output.json(items); return ExitCode.success }
            if items.isEmpty { Output.out("No plugin is quarantined."); return ExitCode.success }
            Output.table([["PLUGIN", "SINCE", "LIBRARY"]] + items.map { [$0.id, $0.since, $0.library] }, indent: "")
            for i in items { Output.out("\(i.id): \(i.reason) (sha256 \(i.sha256))") }
            return ExitCode.success
        case ("clear"?, 2):
            let id = args[1]
            guard let cachePath = options.paths.probeCache,
                  let item = quarantined(options).first(where: { $0.id == id }) else {
                Output.err("termhost plugins quarantine clear: no quarantined plugin has the ID '\(VisibleText.of(id))' (see 'termhost plugins quarantine list')")
                return ExitCode.failure
            }
            var cache = ProbeCache.load(path: cachePath)
            cache.forget(library: item.library)
            cache.save()
            Output.out("termhost: quarantine of plugin '\(id)' (\(item.library)) lifted; it is probed again on the next start")
            return ExitCode.success
        default:
            Output.err(usage)
            return ExitCode.usage
        }
    }

    /// Plugins whose cached probe outcome is a quarantine, with when it began.
    static func quarantined(_ options: RuntimeOptions) -> [Item] {
        var inspection = Inspection.run(options, probe: false)
        inspection.closeDescriptors()
        let cache = options.paths.probeCache.map(ProbeCache.load(path:)) ?? .temporary()
        return inspection.records.compactMap { r in
            guard let failure = r.failure, failure.isQuarantine, r.probe != nil, let id = r.manifest?.id, let lib = r.libraryPath else { return nil }
            let since = cache.entries[lib]?.quarantinedAt.map(format) ?? "-"
            return Item(id: id, library: lib, sha256: r.sha256 ?? "-", reason: failure.description, since: since)
        }
    }

    static func format(_ seconds: Double) -> String {
        guard seconds.isFinite, abs(seconds) < 1e12 else { return "-" }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return f.string(from: Date(timeIntervalSince1970: seconds))
    }
}
