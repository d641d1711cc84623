// termhost-probe: runs one plugin for the first time, away from the host (see ProbeRunner).
// Usage: termhost-probe --library-fd N [--report-fd M] [--manifest PATH] [--pinned-library-fd L]...
//        [--display-path PATH]
// Without --manifest the library is not compared with anything: `termhost plugins manifest`
// derives the manifest from what this reports.
// The plugin gets a real host whose store and secrets live in memory only: its features are
// created and activated against that throwaway host, then shut down and destroyed.
import Foundation
import TermhostLoader
import TermhostRuntime
import TermhostRegistry

// A plugin's init that writes to a closed pipe gets EPIPE here too, as in the host.
BrokenPipeSignal.ignore()
var args = CommandLine.arguments.dropFirst()
var fd: Int32 = -1
var reportFD: Int32 = 1
var manifest = ""
var display = ""
var libraries: [Int32] = []
while let arg = args.popFirst() {
    switch arg {
    case "--library-fd": fd = Int32(args.popFirst() ?? "") ?? -1
    case "--report-fd": reportFD = Int32(args.popFirst() ?? "") ?? 1
    case "--manifest": manifest = args.popFirst() ?? ""
    case "--display-path": display = args.popFirst() ?? ""
    case "--pinned-library-fd": libraries.append(Int32(args.popFirst() ?? "") ?? -1)
    default:
        FileHandle.standardError.write(Data("termhost-probe: unknown argument '\(arg)'\n".utf8))
        exit(2)
    }
}
guard fd >= 0, libraries.allSatisfy({ $0 >= 0 }), !display.isEmpty || !manifest.isEmpty else {
    FileHandle.standardError.write(Data("usage: termhost-probe --library-fd N [--report-fd M] [--manifest PATH] [--pinned-library-fd L]... [--display-path PATH]\n".utf8))
    exit(2)
}
let services = HostServices(paths: .inMemory, policy: EffectivePolicy(), nonInteractive: true, stderrLevel: .error)
exit(ProbeChild.run(fd: fd, libraries: libraries, reportFD: reportFD, manifestPath: manifest.isEmpty ? nil : manifest,
                     displayPath: display.isEmpty ? manifest : display) { id in
    HostBridge.makeHost(pluginID: id, services: services)
} exercise: { factory, features, stage in
    // Each feature runs once here too, so that a crash in create or activate is found by the
    // probe, not by every later command (see ProbeFeatureExercise).
    ProbeFeatureExercise.run(factory, features: features, pluginID: features.first?.source ?? "", services: services, stage: stage)
})
