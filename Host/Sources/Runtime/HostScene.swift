import Synchronization
import TermhostLifecycle
import TermhostServices

/// A front end's scene (NOTES §5), the one value a front end holds for it: commands run in it,
/// its phase follows the front end (background, active), and its terminal is where prompts and
/// notices for it go. Attaching tracks it in the lifecycle (its scene-scope instances are
/// created, process features hear scene_attached) and gives its terminal to the prompt service;
/// `detach()` undoes both.
///
/// Threading: [any-thread]. `detach()` may race itself: the CLI's signal thread detaches on
/// SIGHUP while the command's thread may be detaching because the command returned.
public final class HostScene: Sendable {
    /// The scene's ID, as plugins see it in the `scene` argument of their calls.
    public let id: UInt64
    /// Where prompts read answers and write questions and notices; nil when the front end has
    /// no terminal (not a tty, `--non-interactive`), and then every prompt fails closed.
    public let terminal: Interaction.Terminal?
    private let runtime: HostRuntime
    private let detached = Mutex(false)

    init(runtime: HostRuntime, terminal: Interaction.Terminal?, stdio: SceneStdio, environment: [String: String]?) {
        self.runtime = runtime
        self.terminal = terminal
        // Streams, environment and terminal before any feature hears of the scene: a scene
        // feature's activate() may already read them.
        id = runtime.lifecycle.attachScene(hasTerminal: terminal != nil) { id in
            runtime.setStdio(stdio, scene: id)
            runtime.services.environments.set(environment, scene: id)
            runtime.services.interaction.attach(scene: id, terminal: terminal)
        }
    }

    /// Runs a contributed command in this scene; nil when no enabled feature contributes it.
    public func run(_ argv: [String], json: Bool) -> Int32? {
        runtime.runCommand(scene: id, argv: argv, json: json)
    }

    /// Reports the front end going to background or coming back (.background or .active);
    /// SIGTSTP and SIGCONT for the CLI.
    public func setPhase(_ phase: Phase) {
        runtime.lifecycle.setScenePhase(id, phase)
    }

    /// Turns echo back on if a secret prompt turned it off; before the process exits on a
    /// signal. Idempotent.
    public func restoreTerminal() {
        runtime.services.interaction.restoreTerminal()
    }

    /// Stops tracking the scene (its workspaces close, its instances shut down within the
    /// shutdown bound, process features hear scene_detached), then forgets its terminal, so a
    /// later prompt for it fails closed. Only the first call does anything; a second one, from
    /// another thread, returns at once.
    public func detach() {
        let first = detached.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        runtime.lifecycle.detachScene(id)
        runtime.services.interaction.detach(scene: id)
        runtime.setStdio(nil, scene: id)
        runtime.services.environments.set(nil, scene: id)
    }
}

extension HostRuntime {
    /// Attaches a front end's scene; `terminal` is where its prompts go, nil for none;
    /// `stdio` the streams its commands get (the process's own, or a daemon client's);
    /// `environment` the user's environment its plugins read (nil: the process's own).
    public func attachScene(terminal: Interaction.Terminal?, stdio: SceneStdio = .process,
                            environment: [String: String]? = nil) -> HostScene {
        HostScene(runtime: self, terminal: terminal, stdio: stdio, environment: environment)
    }
}

/// The streams a scene's commands read and write: the CLI's own (0, 1, 2), or, in the daemon,
/// the descriptors a client passed for the command it asked to run there.
public struct SceneStdio: Sendable, Equatable {
    public var input: Int32
    public var output: Int32
    public var error: Int32

    public init(input: Int32, output: Int32, error: Int32) {
        self.input = input
        self.output = output
        self.error = error
    }

    public static let process = SceneStdio(input: 0, output: 1, error: 2)
}
