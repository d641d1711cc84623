import TermhostLoader
import TermhostRegistry

/// One plugin as `plugins list`, `plugins info` and `doctor` show it.
struct PluginView: Encodable {
    var id: String?
    var version: String?
    var directory: String
    var origin: String
    var status: String
    var reason: String?
    var library: String?
    var sha256: String?
    var probe: String?
    var probeMs: Double?
    var loadMs: Double?
    var initMs: Double?
    var features: [String]

    init(_ r: PluginRecord) {
        id = r.manifest?.id
        version = r.manifest?.version
        directory = r.directory
        origin = r.origin.rawValue
        library = r.libraryPath
        sha256 = r.sha256
        probe = r.probe
        probeMs = r.probeMilliseconds
        loadMs = r.loadMilliseconds
        initMs = r.initMilliseconds
        features = r.manifest?.features.map(\.id.rawValue) ?? []
        switch r.failure {
        case nil:
            status = r.probe == nil ? "not probed yet" : "ok"
        case .shadowed?, .notInPluginSet?:
            status = "skipped"
            reason = r.failure!.description
        case let f? where f.isQuarantine && r.probe != nil:
            status = "quarantined"
            let file = r.libraryPath.map(lastComponent) ?? "the library"
            reason = "\(f.description); it will be probed again when \(file) or its manifest changes"
                + (id.map { " ('termhost plugins quarantine clear \($0)' lifts it now)" } ?? "")
        case .probeUnavailable?, .disabledByRegistry?:
            status = "not loaded"
            reason = r.failure!.description
        case let f?:
            status = "rejected"
            reason = f.description
        }
    }

    var label: String { id.map { "\($0) \(version ?? "")" } ?? directory }
}

/// The last path component, for messages.
func lastComponent(_ path: String) -> String { String(path.split(separator: "/").last ?? Substring(path)) }
