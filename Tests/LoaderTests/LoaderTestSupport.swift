import Foundation
import TermhostLoader
import TermhostRuntime
import TermhostServices
import TestSupport

/// Runtime options confined to a temporary directory, with one plugin directory to search.
func options(_ dir: TemporaryDirectory, plugins: [PluginSearchPath.Entry], probeTimeout: Double = 5,
             safeMode: Bool = false) -> RuntimeOptions {
    var o = RuntimeOptions()
    o.searchPath = PluginSearchPath(entries: plugins)
    o.paths = .under(dir.path)
    o.probe = ProbeRunner(executable: Paths.probe, timeout: probeTimeout)
    o.logLevel = .error
    o.safeMode = safeMode
    o.shutdownBound = 1
    return o
}

func options(_ dir: TemporaryDirectory, pluginDir: String, probeTimeout: Double = 5) -> RuntimeOptions {
    options(dir, plugins: [.init(directory: pluginDir, origin: .environment)], probeTimeout: probeTimeout)
}

extension Inspection {
    func record(_ id: String) -> PluginRecord? { records.first { $0.manifest?.id == id } }
    func record(dir: String) -> PluginRecord? { records.first { $0.directory.hasSuffix("/" + dir) } }
}
