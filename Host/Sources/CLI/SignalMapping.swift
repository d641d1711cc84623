import Dispatch
import Foundation
import TermhostRuntime

/// NOTES §5's Unix mapping for the CLI's scene: SIGTSTP puts it in background (then really
/// stops the process), SIGCONT brings it back. SIGHUP, SIGTERM and SIGINT ask the running
/// command to stop (termhost.cancel/1) and wait for it within the shutdown bound, then shut
/// down (SIGHUP detaching the scene first) and exit with 128 + the signal; a second one of
/// them exits at once.
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

    init(runtime: HostRuntime, scene: HostScene) {
        func on(_ sig: Int32, _ body: @escaping @Sendable () -> Void) {
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            s.setEventHandler(handler: body)
            s.resume()
            sources.append(s)
        }
        on(SIGTSTP) {
            scene.setPhase(.background)
            kill(getpid(), SIGSTOP)
        }
        on(SIGCONT) { scene.setPhase(.active) }
        // A terminating signal: ask the command to stop and wait for it (bounded), then shut
        // down; on a thread of its own, so that this queue stays free for a second signal,
        // which ends the process at once (the user gave up waiting).
        for sig in [SIGHUP, SIGTERM, SIGINT] {
            on(sig) { [self] in
                let first = ending.withLock {
                    if endingSignal != nil { return false }
                    endingSignal = sig
                    return true
                }
                guard first else {
                    Output.err("termhost: \(SignalMapping.name(sig)) again; exiting without waiting for plugins")
                    SignalMapping.end(ExitCode.signal(sig))
                }
                scene.restoreTerminal()
                let thread = Thread {
                    SignalMapping.stop(runtime, scene: scene, detach: sig == SIGHUP)
                    SignalMapping.end(ExitCode.signal(sig))
                }
                thread.name = "termhost-stop"
                thread.start()
            }
        }
    }

    static func name(_ sig: Int32) -> String {
        switch sig {
        case SIGINT: "interrupt"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(sig)"
        }
    }

    /// Cancel, then the bounded shutdown, which waits for the command before destroying
    /// anything; every plugin that did not return in time is named. A hang-up also detaches
    /// the scene first.
    static func stop(_ runtime: HostRuntime, scene: HostScene, detach: Bool) {
        runtime.cancelCommands()
        if detach { scene.detach() }
        let outcome = runtime.shutdown()
        for message in runtime.abandonedCommands(outcome) + runtime.shutdownProblems(outcome) {
            Output.err(message)
        }
    }
}
