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
    private let ending = NSLock()
    private var endingSignal: Int32?

    /// Ends the process after a signal's bounded shutdown. _exit, not exit: atexit handlers
    /// (libcrypto's cleanup among them) would run while the command's thread or a plugin
    /// thread the bound abandoned may still be inside those libraries, and crash there.
    static func end(_ status: Int32) -> Never {
        fflush(nil)   // every C stdio stream; termhost's own output is unbuffered write(2)
        _exit(status)
    }

    /// The signal that started a shutdown, if one did: a command that returns because of it
    /// (a transfer pausing) must still end the process with 128 + that signal.
    var terminatingSignal: Int32? { ending.withLock { endingSignal } }

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
        on(SIGHUP) { [self] in
            ending.withLock { endingSignal = SIGHUP }
            runtime.services.interaction.restoreTerminal()
            runtime.lifecycle.detachScene(scene)
            runtime.shutdown()
            SignalMapping.end(ExitCode.signal(SIGHUP))
        }
        for sig in [SIGTERM, SIGINT] {
            on(sig) { [self] in
                ending.withLock { endingSignal = sig }
                runtime.services.interaction.restoreTerminal()
                runtime.shutdown()
                SignalMapping.end(ExitCode.signal(sig))
            }
        }
    }
}
