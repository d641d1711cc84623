import Dispatch
import Foundation
import TermhostLifecycle
import TermhostRuntime

/// NOTES §5's Unix mapping for the CLI's scene: SIGTSTP puts it in background (then really
/// stops the process), SIGCONT brings it back, SIGHUP detaches it, SIGTERM and SIGINT start the
/// bounded shutdown and exit with 128 + the signal.
final class SignalMapping: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "termhost.signals")

    init(runtime: HostRuntime, scene: UInt64) {
        func on(_ sig: Int32, _ body: @escaping @Sendable () -> Void) {
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            s.setEventHandler(handler: body)
            s.resume()
            sources.append(s)
        }
        on(SIGTSTP) {
            runtime.lifecycle.setScenePhase(scene, .background)
            kill(getpid(), SIGSTOP)
        }
        on(SIGCONT) { runtime.lifecycle.setScenePhase(scene, .active) }
        on(SIGHUP) {
            runtime.services.interaction.restoreTerminal()
            runtime.lifecycle.detachScene(scene)
            runtime.shutdown()
            exit(ExitCode.signal(SIGHUP))
        }
        for sig in [SIGTERM, SIGINT] {
            on(sig) {
                runtime.services.interaction.restoreTerminal()
                runtime.shutdown()
                exit(ExitCode.signal(sig))
            }
        }
    }
}
