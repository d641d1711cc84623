import Foundation
import TermhostRegistry

/// Drives feature instances through NOTES §5: process, scene and workspace scopes; active,
/// background, expired and terminating phases; publish-before-connect; bounded, idempotent
/// shutdown in reverse order.
///
/// Threading: public methods may be called from any thread; state is guarded by one recursive
/// lock, and feature callbacks run while it is held, so they never run concurrently with each
/// other. Shutdown is the exception: its callbacks run on a dedicated thread that the caller
/// waits for at most `shutdownBound` seconds, so a hung plugin cannot keep the process alive;
/// and a command (`calls`) may still be running in an instance while it hears shutdown().
public final class LifecycleManager: @unchecked Sendable {
    public struct Options: Sendable {
        /// Seconds shutdown may take before it is abandoned (NOTES §8: 3 s).
        public var shutdownBound: Double = 3
        /// Seconds in background before live work expires; nil disables the timer.
        public var backgroundGrace: Double? = 30
        /// Whether the process phase follows the scenes (background once all are). A front end's
        /// does; the daemon's stays active: its scenes are in background whenever no client is
        /// attached, which is exactly when its work must go on.
        public var phaseFollowsScenes = true
        public init(shutdownBound: Double = 3, backgroundGrace: Double? = 30, phaseFollowsScenes: Bool = true) {
            self.shutdownBound = shutdownBound
            self.backgroundGrace = backgroundGrace
            self.phaseFollowsScenes = phaseFollowsScenes
        }
    }

    struct Live: @unchecked Sendable {
        let id: FeatureID
        let instance: any FeatureInstance
    }

    struct Scene {
        var phase: Phase = .active
        var hasTerminal: Bool
        var instances: [Live] = []
        var workspaces: [UInt64] = []
    }

    struct Workspace {
        let scene: UInt64
        let index: Int
        var instances: [Live] = []
        /// Set by expiry: live work was retired and should resume on foreground.
        var resumeOnForeground = false
    }

    public let options: Options
    private let features: [ResolvedFeature]
    let onEvent: @Sendable (LifecycleEvent) -> Void
    private let lock = NSRecursiveLock()

    var processInstances: [Live] = []
    var scenes: [UInt64: Scene] = [:]
    var sceneOrder: [UInt64] = []
    var workspaces: [UInt64: Workspace] = [:]
    private var nextID: UInt64 = 1
    private var aggregate: Phase = .active
    private var backgroundGeneration = 0
    private var started = false
    /// Features that failed to create or activate, with the reason; dependents are skipped.
    public private(set) var failures: [FeatureID: String] = [:]

    /// Set by the first shutdown(); from then on its thread owns every instance.
    var shutdownState: ShutdownState?

    /// Calls into instances that have not returned (commands): such an instance is never
    /// destroyed; its shutdown() may still run (see entry.h, [main]).
    public let calls = CallsInProgress()

    public init(features: [ResolvedFeature], options: Options = Options(),
                onEvent: @escaping @Sendable (LifecycleEvent) -> Void = { _ in }) {
        self.features = features.filter { $0.state == .enabled }
        self.options = options
        self.onEvent = onEvent
    }

    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    // MARK: - Queries

    public var phase: Phase { locked { shutdownState != nil ? .terminating : aggregate } }
    public var sceneIDs: [UInt64] { locked { sceneOrder } }
    /// How many scenes are in background now.
    public var backgroundSceneCount: Int { locked { scenes.values.filter { $0.phase == .background }.count } }
    public func workspaceIDs(in scene: UInt64) -> [UInt64] { locked { scenes[scene]?.workspaces ?? [] } }
    public func workspaceIndex(_ workspace: UInt64) -> Int? { locked { workspaces[workspace]?.index } }
    public func wantsResume(_ workspace: UInt64) -> Bool { locked { workspaces[workspace]?.resumeOnForeground ?? false } }

    /// The live instance of a feature in a scope (process: scene 0), for command dispatch.
    public func instance(_ id: FeatureID, scene: UInt64 = 0, workspace: UInt64 = 0) -> (any FeatureInstance)? {
        locked {
            if workspace != 0 { return workspaces[workspace]?.instances.first { $0.id == id }?.instance }
            if scene != 0, let s = scenes[scene]?.instances.first(where: { $0.id == id }) { return s.instance }
            return processInstances.first { $0.id == id }?.instance
        }
    }

    // MARK: - Start

    /// Creates and activates the process-scope features in order. A failure is recorded and
    /// the host carries on; features that require a failed one are skipped with a reason.
    public func start() {
        locked {
            guard !started else { return }
            started = true
            instantiate(.process, ScopeContext.process) { processInstances.append($0) }
        }
    }

    /// Creates and activates the scope's features in order; each one is published (`add`) as
    /// soon as it is active, so the next feature's activate() can already use its services.
    private func instantiate(_ scope: FeatureScope, _ context: ScopeContext, add: (Live) -> Void) {
        for f in features where f.descriptor.scope == scope {
            let d = f.descriptor
            if let failed = d.requiresFeatures.first(where: { failures[$0] != nil }) {
                failures[d.id] = "requires feature '\(failed)', which failed to start"
                continue
            }
            guard let factory = f.registration.factory else {
                failures[d.id] = "no factory (known from its manifest only)"
                continue
            }
            do {
                let instance = try factory.makeInstance(of: d, in: context)
                do {
                    try instance.activate(context)
                } catch {
                    instance.destroy()
                    throw error
                }
                add(Live(id: d.id, instance: instance))
            } catch {
                let reason = (error as? FeatureFailure)?.message ?? "\(error)"
                failures[d.id] = reason
                onEvent(.featureFailed(d.id.rawValue, reason))
            }
        }
    }

    // MARK: - Scenes

    /// Tracks a new front end and creates its scene-scope instances. Returns the scene ID.
    /// `prepare` gets the ID first, before any instance hears of the scene (the host gives the
    /// scene its streams and environment there, so that activate() already finds them).
    @discardableResult
    public func attachScene(hasTerminal: Bool, prepare: (UInt64) -> Void = { _ in }) -> UInt64 {
        let id: UInt64 = locked {
            let id = nextID
            nextID += 1
            prepare(id)
            let context = ScopeContext(scene: id, hasTerminal: hasTerminal)
            scenes[id] = Scene(hasTerminal: hasTerminal)
            sceneOrder.append(id)
            instantiate(.scene, context) { scenes[id]!.instances.append($0) }
            for live in processInstances { live.instance.sceneAttached(context) }
            recomputeAggregate()
            return id
        }
        onEvent(.sceneAttached(id))
        return id
    }

    /// Stops tracking a scene: its workspaces close, its instances shut down (bounded, like
    /// shutdown), process features hear scene_detached. (SIGHUP does this for the CLI's scene.)
    public func detachScene(_ scene: UInt64) {
        // Once shutdown has begun, its thread owns every instance (and destroys them): a scene
        // detached after that (the CLI's command returning during a signal's shutdown) must not
        // call into them.
        let removed: (Scene, [Live])? = locked {
            guard shutdownState == nil, let s = scenes[scene] else { return nil }
            let instances = s.workspaces.reversed().flatMap { workspaces[$0]!.instances.reversed() } + s.instances.reversed()
            for w in s.workspaces { workspaces[w] = nil }
            scenes[scene] = nil
            sceneOrder.removeAll { $0 == scene }
            return (s, instances)
        }
        guard let (s, instances) = removed else { return }
        retire(instances)
        for w in s.workspaces { onEvent(.workspaceClosed(scene: scene, workspace: w)) }
        locked {
            guard shutdownState == nil else { return }
            let context = ScopeContext(scene: scene, hasTerminal: s.hasTerminal)
            for live in processInstances { live.instance.sceneDetached(context) }
            recomputeAggregate()
        }
        onEvent(.sceneDetached(scene))
    }

    /// Reports a scene's phase (.active or .background); SIGTSTP/SIGCONT for the CLI.
    public func setScenePhase(_ scene: UInt64, _ phase: Phase) {
        precondition(phase == .active || phase == .background, "a scene is either active or in background")
        locked {
            guard scenes[scene] != nil else { return }
            scenes[scene]!.phase = phase
            recomputeAggregate()
        }
    }

    private var allInstances: [Live] {
        processInstances + sceneOrder.flatMap { scenes[$0]!.instances }
            + sceneOrder.flatMap { scenes[$0]!.workspaces }.flatMap { workspaces[$0]!.instances }
    }

    private func recomputeAggregate() {
        guard shutdownState == nil else { return }
        let allBackground = options.phaseFollowsScenes && !scenes.isEmpty && scenes.values.allSatisfy { $0.phase == .background }
        switch (aggregate, allBackground) {
        case (.active, true):
            aggregate = .background
            backgroundGeneration += 1
            for live in allInstances { live.instance.background() }
            onEvent(.phaseChanged(.background))
            scheduleExpiry(generation: backgroundGeneration)
        case (.background, false), (.expired, false):
            aggregate = .active
            backgroundGeneration += 1
            for live in allInstances { live.instance.foreground() }
            for id in workspaces.keys { workspaces[id]!.resumeOnForeground = false }
            onEvent(.phaseChanged(.active))
        default:
            break
        }
    }

    private func scheduleExpiry(generation: Int) {
        guard let grace = options.backgroundGrace else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + grace) { [weak self] in
            self?.expire(ifGeneration: generation)
        }
    }

    /// Expires background work now (the grace timer calls this; tests may too). Only acts when
    /// the process is in background. Live work is retired but its intent kept.
    public func expire() { locked { expire(ifGeneration: backgroundGeneration) } }

    private func expire(ifGeneration generation: Int) {
        locked {
            // A timer from an earlier background period must not expire this one.
            guard aggregate == .background, generation == backgroundGeneration, shutdownState == nil else { return }
            aggregate = .expired
            for live in allInstances { live.instance.expire() }
            for id in workspaces.keys { workspaces[id]!.resumeOnForeground = true }
            onEvent(.phaseChanged(.expired))
        }
    }

    // MARK: - Workspaces

    /// Publishes a workspace in the scene (event first, so front ends show it before it
    /// connects), then creates and activates its workspace-scope instances ("connect").
    /// Returns nil for an unknown scene or during shutdown.
    @discardableResult
    public func openWorkspace(in scene: UInt64) -> UInt64? {
        let published: (UInt64, Int)? = locked {
            guard let s = scenes[scene], shutdownState == nil else { return nil }
            let used = Set(s.workspaces.compactMap { workspaces[$0]?.index })
            let index = (1...).first { !used.contains($0) }!
            let id = nextID
            nextID += 1
            workspaces[id] = Workspace(scene: scene, index: index)
            scenes[scene]!.workspaces.append(id)
            return (id, index)
        }
        guard let (id, index) = published else { return nil }
        onEvent(.workspacePublished(scene: scene, workspace: id, index: index))
        locked {
            guard workspaces[id] != nil, let s = scenes[scene] else { return }
            instantiate(.workspace, ScopeContext(scene: scene, workspace: id, hasTerminal: s.hasTerminal)) {
                workspaces[id]!.instances.append($0)
            }
        }
        return id
    }

    public func closeWorkspace(_ workspace: UInt64) {
        let closed: Workspace? = locked {
            guard shutdownState == nil, let w = workspaces[workspace] else { return nil }
            workspaces[workspace] = nil
            scenes[w.scene]?.workspaces.removeAll { $0 == workspace }
            return w
        }
        guard let closed else { return }
        retire(closed.instances.reversed())
        onEvent(.workspaceClosed(scene: closed.scene, workspace: workspace))
    }

    /// Shuts down and destroys instances, already in the order given, within the shutdown
    /// bound; an instance still in shutdown() when it expires is abandoned, not destroyed.
    private func retire(_ instances: [Live]) {
        guard !instances.isEmpty else { return }
        final class Progress: @unchecked Sendable {
            let lock = NSLock()
            /// The one feature whose shutdown() is running: the only one to blame if it hangs.
            var current: String?
            var abandoned = false
        }
        let progress = Progress()
        let done = DispatchSemaphore(value: 0)
        let calls = self.calls
        let deadline = Date().addingTimeInterval(options.shutdownBound)
        let thread = Thread {
            for live in instances {
                progress.lock.lock()
                progress.current = live.id.rawValue
                progress.lock.unlock()
                live.instance.shutdown()
                progress.lock.lock()
                progress.current = nil
                let abandoned = progress.abandoned
                progress.lock.unlock()
                if abandoned { return }
            }
            // A command still running in one of them (SIGHUP detaching the scene of a running
            // session) gets until the deadline to return; its instance is destroyed only then.
            let busy = calls.waitUntilNone(of: instances.map { $0.instance }, before: deadline)
            progress.lock.lock()
            let abandoned = progress.abandoned
            progress.lock.unlock()
            if abandoned { return }
            for live in instances where !busy.contains(ObjectIdentifier(live.instance)) { live.instance.destroy() }
            done.signal()
        }
        thread.name = "termhost-retire"
        thread.start()
        // A little past the deadline: the thread's own wait for commands ends at it, and the
        // destroy() calls after that are not a hang.
        if done.wait(timeout: .now() + options.shutdownBound + 0.5) == .timedOut {
            progress.lock.lock()
            progress.abandoned = true
            let stuck = progress.current.map { [$0] } ?? []
            progress.lock.unlock()
            locked { abandonedEarlier += stuck }
            for id in stuck { onEvent(.featureFailed(id, "did not finish shutting down within \(options.shutdownBound) s")) }
        }
    }

    /// Instances abandoned by a bounded retirement (scene detach, workspace close) before
    /// shutdown; shutdown reports them with its own.
    var abandonedEarlier: [String] = []
}
