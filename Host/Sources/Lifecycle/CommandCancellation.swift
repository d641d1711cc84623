import Foundation
import Synchronization

/// The host's side of `termhost.cancel/1` (SDK/include/termhost/services/commands.h): a flag
/// per scene that running commands poll, and handlers they register to be woken. SIGINT,
/// SIGTERM and SIGHUP cancel every scene before the host waits for the command to return;
/// without this a command had no way to learn that it should stop, and was torn down under
/// its own feet.
///
/// Threading: every method may be called from any thread. Handlers run with `lock` held, so
/// `remove` returning means the handler is not running (a recursive lock, so a handler may
/// remove itself or ask `isCancelled`).
public final class CommandCancellation: @unchecked Sendable {
    /// What a registration calls: the plugin's C handler and its user pointer, wrapped.
    public typealias Handler = @Sendable (_ scene: UInt64) -> Void

    private struct Registration {
        let scene: UInt64
        let handler: Handler
    }

    private let lock = NSRecursiveLock()
    /// Set once anything was cancelled: until then `isCancelled` takes no lock, so commands
    /// may poll it in tight loops.
    private let anything = Atomic<Bool>(false)
    private var everything = false
    private var scenes: Set<UInt64> = []
    private var registrations: [UInt64: Registration] = [:]
    private var nextToken: UInt64 = 1

    public init() {}

    /// Whether the commands in `scene` were asked to stop (scene 0: whether the whole host was).
    public func isCancelled(_ scene: UInt64) -> Bool {
        guard anything.load(ordering: .acquiring) else { return false }
        lock.lock()
        defer { lock.unlock() }
        return everything || (scene != 0 && scenes.contains(scene))
    }

    /// Registers a handler for `scene` (0: any cancellation) and returns its token. If the
    /// scene is already cancelled the handler runs now, on this thread, and the token is spent.
    public func onCancel(scene: UInt64, _ handler: @escaping Handler) -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        let token = nextToken
        nextToken &+= 1
        if everything || (scene != 0 && scenes.contains(scene)) {
            handler(scene)
        } else {
            registrations[token] = Registration(scene: scene, handler: handler)
        }
        return token
    }

    /// Ends a registration; once this returns its handler is not running and never will.
    public func remove(_ token: UInt64) {
        lock.lock()
        registrations[token] = nil
        lock.unlock()
    }

    /// Asks the commands of one scene to stop: sets its flag, then runs the handlers
    /// registered for it, each once.
    public func cancel(scene: UInt64) {
        fire(everything: false, scene: scene)
    }

    /// Asks every command to stop (a terminating signal).
    public func cancelAll() {
        fire(everything: true, scene: 0)
    }

    private func fire(everything all: Bool, scene: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        if all { everything = true } else { scenes.insert(scene) }
        anything.store(true, ordering: .releasing)
        // In token order, so handlers run in the order they were registered.
        for token in registrations.keys.sorted() {
            guard let r = registrations[token], all || r.scene == scene || r.scene == 0 else { continue }
            registrations[token] = nil   // once, even if the handler re-registers
            r.handler(all ? r.scene : scene)
        }
    }
}
