import CTermhost
import Foundation
import Synchronization
import TermhostLifecycle
import TermhostLoader
import TermhostRegistry
import TermhostServices

/// A running host: plugins loaded in one batch, features resolved and started, one lifecycle
/// manager. Start-up order: host services (store, secrets, log) -> inspection (discovery,
/// preflight, probe) -> dlopen + init of each plugin that passed -> registry from the live
/// factories -> policy resolution -> process-scope features activated.
/// One plugin failing at any stage is recorded with its cause and the others carry on.
public final class HostRuntime: @unchecked Sendable {
    public let options: RuntimeOptions
    public let services: HostServices
    public private(set) var inspection: Inspection
    public private(set) var resolution: Resolution
    public private(set) var lifecycle: LifecycleManager
    /// Problems found while registering live features (duplicate IDs), naming both plugins.
    public private(set) var registryProblems: [RegistryError] = []
    private var loaded: [(record: PluginRecord, entry: PluginEntry)] = []
    /// The loaded plugins' typed actions, resolved and prepared for libffi (ActionTable).
    let actions = ActionTable()
    /// Each loaded plugin's slot in the crash recorder, by record label (see CallTracker).
    private var crashSlots: [String: Int32] = [:]
    private var shutdownOutcome: ShutdownOutcome?
    private let shutdownLock = NSLock()
    /// Each scene's streams, where they are not the process's (daemon clients' scenes); a
    /// command run in the scene, directly or through termhost.commands/1, gets these.
    private let sceneStdio = Mutex<[UInt64: SceneStdio]>([:])
    /// Which plugins run commands now, in the daemon (CommandSlots).
    public let commandSlots = CommandSlots()

    public var records: [PluginRecord] { inspection.records }

    /// Commands the CLI implements itself; no feature may contribute these names.
    public static let builtInCommands: Set<String> = ["plugins", "features", "doctor", "tools", "actions", "call", "version", "help", "settings", "daemon", "sessions", "attach"]

    public static func start(_ options: RuntimeOptions) throws(StartupError) -> HostRuntime {
        LibcryptoAtExit.keepUntilProcessEnds()
        BrokenPipeSignal.ignore()
        // A plugin that crashed an earlier run is named and quarantined before anything is
        // inspected, so this start goes on without it; then this run's crashes are recorded.
        for line in CrashQuarantine.handlePreviousCrashes(options.paths) {
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
        let services = HostServices(paths: options.paths, policy: EffectivePolicy(),
                                    nonInteractive: options.nonInteractive, stderrLevel: options.logLevel)
        var inspection = Inspection.run(options, probe: true, brokenServices: services.brokenServices)
        if !inspection.policyErrors.isEmpty {
            inspection.closeDescriptors()
            throw StartupError(messages: inspection.policyErrors.map(\.description)
                               + ["termhost: refusing to start until the configuration above is fixed"])
        }
        services.policy = inspection.policy
        services.daemonRole = options.daemon
        services.syncProvider = inspection.syncProvider
        let runtime = HostRuntime(options: options, services: services, inspection: inspection)
        try runtime.load()
        return runtime
    }

    private init(options: RuntimeOptions, services: HostServices, inspection: Inspection) {
        self.options = options
        self.services = services
        self.inspection = inspection
        self.resolution = inspection.resolution
        self.lifecycle = LifecycleManager(features: [])
    }

    private func load() throws(StartupError) {
        var registry = FeatureRegistry()
        // Every plugin's pinned libraries first: a library another plugin needs by the same
        // soname (libcurl's libssh2.so.1, for the assistant) then binds to the pinned image too,
        // instead of the system's being loaded first and taken by every later plugin.
        for record in inspection.catalog.records where record.failure == nil && inspection.descriptors[record.directory] != nil {
            try? PinnedLibraries.preload(record.pinnedLibraryDescriptors)
        }
        for i in inspection.catalog.records.indices {
            let record = inspection.catalog.records[i]
            guard record.failure == nil, let fd = inspection.descriptors[record.directory] else { continue }
            defer {
                close(fd)
                inspection.catalog.records[i].closePinnedLibraries()
            }
            let pluginID = record.manifest!.id
            // Its topics are its own even when it is not loaded (disabled by policy): nobody
            // else may publish an event in its name.
            HostBridge.reserveTopics(of: pluginID)
            // A plugin whose every feature the policy disables is not loaded at all: none of its
            // code runs. Its features are still registered, from the manifest, so that
            // `termhost features` and a call to its command say why.
            let manifestFeatures = record.manifest!.descriptors(source: record.label)
            if manifestFeatures.allSatisfy({ services.policy.disabledReason($0.id) != nil }) {
                inspection.catalog.records[i].failure = .disabledByRegistry("every feature it provides is disabled by policy")
                for d in manifestFeatures {
                    do { try registry.register(d) } catch { registryProblems.append(error) }
                }
                continue
            }
            let loadStart = Date()
            let slot = CallTracker.register(pluginID: pluginID, sha256: record.sha256, library: record.libraryPath)
            crashSlots[record.label] = slot
            do {
                let entry = try CallTracker.inside(slot, "dlopen") { () throws(LoadFailure) in
                    try PluginEntry.load(fd: fd, libraries: record.pinnedLibraryDescriptors,
                                         displayPath: record.libraryPath ?? record.directory)
                }
                CallTracker.registerImage(slot, containing: UnsafeRawPointer(entry.entry))
                inspection.catalog.records[i].loadMilliseconds = Date().timeIntervalSince(loadStart) * 1000
                let initStart = Date()
                let host = HostBridge.makeHost(pluginID: pluginID, services: services)
                try CallTracker.inside(slot, "init") { () throws(LoadFailure) in try entry.initialize(host) }
                inspection.catalog.records[i].initMilliseconds = Date().timeIntervalSince(initStart) * 1000
                services.log.log(.debug, "host", String(format: "loaded %@ in %.2f ms, init %.2f ms", pluginID,
                                                        inspection.catalog.records[i].loadMilliseconds!,
                                                        inspection.catalog.records[i].initMilliseconds!))
                loaded.append((inspection.catalog.records[i], entry))
                actions.register(record.manifest!, fd: fd, crashSlot: slot)
                let offered = CallTracker.inside(slot, "get_factory") { entry.featureFactory }
                guard let factory = offered else { continue }
                let source = inspection.catalog.records[i].label
                let declared = Set(record.manifest!.features.map(\.id))
                let descriptors = try CallTracker.inside(slot, "get_descriptor") { () throws(LoadFailure) in
                    try PluginEntry.descriptors(of: factory, source: source)
                }
                for d in descriptors {
                    // The probe found the factory's features equal to the manifest's, which
                    // stay inside the plugin's namespace; a factory that answers differently
                    // now is refused the same way rather than trusted.
                    guard declared.contains(d.id) else {
                        registryProblems.append(.featureOutsideNamespace(d.id, plugin: pluginID, owner: nil))
                        continue
                    }
                    do { try registry.register(d, factory: PluginFeatureFactory(factory: factory, pluginID: pluginID, crashSlot: slot)) }
                    catch { registryProblems.append(error) }
                }
            } catch {
                inspection.catalog.records[i].failure = error
                services.log.log(.error, "host", "\(record.label) not loaded: \(error)")
            }
        }
        inspection.descriptors = [:]

        resolution = registry.resolve(services.policy, hostServices: services.availableServiceIDs,
                                      brokenServices: services.brokenServices, reservedCommands: HostRuntime.builtInCommands,
                                      pinnedSources: inspection.catalog.pinnedSources)
        if !resolution.fatal.isEmpty {
            throw StartupError(messages: resolution.fatal.map(\.description)
                               + ["termhost: refusing to start without the required features above"])
        }
        let events = services.events
        // The daemon's process is never in background, so it never expires: it is where work
        // goes on while every scene is in background (no client attached). Background and
        // expiry pause work and retire transports, which is for a front end left behind.
        let isDaemon = if case .daemon = options.daemon { true } else { false }
        lifecycle = LifecycleManager(features: resolution.enabled,
                                     options: .init(shutdownBound: options.shutdownBound, phaseFollowsScenes: !isDaemon),
                                     onEvent: { event in
                                         let (topic, payload) = event.topicAndPayload
                                         events.publish(topic, payload)
                                     })
        services.commandList = { [resolution] in
            resolution.enabled.flatMap { f in f.descriptor.commands.compactMap { c in
                resolution.commandOwners[c.name] == f.descriptor.id ? (c.name, c.summary, f.descriptor.id.rawValue) : nil
            } }.sorted { $0.name < $1.name }
        }
        services.runCommand = { [weak self] scene, argv in self?.runCommand(scene: scene, argv: argv, json: false) }
        services.providedService = { [weak self] id in self?.providedService(id) }
        services.resolvedFeatureEnabled = { [resolution] id in resolution.feature(id)?.state == .enabled }
        services.tools = ToolService(resolution: resolution, lifecycle: lifecycle, cancellation: services.cancellation,
                                     actionCall: { [weak self] name, json in self?.callActionTool(name, argumentsJSON: json) })
        lifecycle.start()
        for (id, reason) in lifecycle.failures.sorted(by: { $0.key < $1.key }) {
            services.log.log(.error, "host", "feature '\(id)' did not start: \(reason)")
        }
    }

    /// A service offered by an active feature that lists it in providesServices.
    public func providedService(_ id: String) -> UnsafeRawPointer? {
        for f in resolution.enabled where f.descriptor.providesServices.contains(id) {
            if let instance = lifecycle.instance(f.descriptor.id) as? PluginFeature, let p = instance.service(id) { return p }
        }
        return nil
    }

    func setStdio(_ stdio: SceneStdio?, scene: UInt64) {
        sceneStdio.withLock { $0[scene] = stdio == .process ? nil : stdio }
    }

    /// The plugin (its record label) whose enabled feature contributes the command `name`; nil
    /// when none does (a daemon runs only those, one at a time per plugin).
    public func commandPlugin(_ name: String) -> String? {
        resolution.commandOwners[name].flatMap { resolution.feature($0)?.descriptor.source }
    }

    /// Whether the feature that contributes the command `name` lets its commands overlap
    /// (ABI 1.6 `concurrent_commands`).
    public func commandRunsConcurrently(_ name: String) -> Bool {
        resolution.commandOwners[name].flatMap { resolution.feature($0)?.descriptor.concurrentCommands } ?? false
    }

    /// Runs a contributed command in a scene. nil when no enabled feature contributes it.
    public func runCommand(scene: UInt64, argv: [String], json: Bool) -> Int32? {
        guard let name = argv.first, let owner = resolution.commandOwners[name],
              let feature = resolution.feature(owner) else { return nil }
        let scope = feature.descriptor.scope
        // A workspace-scope command gets a workspace of its own in the scene: published first,
        // then connected (its instances activated), like a front end opening a tab.
        let workspace = scope == .workspace ? lifecycle.openWorkspace(in: scene) ?? 0 : 0
        guard let instance = lifecycle.instance(owner, scene: scope == .process ? 0 : scene, workspace: workspace) as? PluginFeature else {
            let reason = lifecycle.failures[owner] ?? "it has no live instance in this scope (\(scope))"
            FileHandle.standardError.write(Data("termhost: \(name): feature '\(owner)' is not running: \(reason)\n".utf8))
            return 1
        }
        // Recorded while it runs: shutdown never destroys an instance (nor deinits a plugin)
        // a command is still inside, and a signal waits here for it to return.
        // In the daemon a command run by another command may run beside a client's command of
        // its plugin, on another thread: it takes the plugin's slot as a client's command does,
        // unless this thread holds that plugin already.
        let plugin = feature.descriptor.source, shared = feature.descriptor.concurrentCommands
        var taken = false
        if case .daemon = options.daemon, CommandDepth.current > 0, !CommandSlots.held.contains(plugin) {
            guard commandSlots.take(plugin, shared: shared) else {
                let stdio = sceneStdio.withLock { $0[scene] } ?? .process
                let text = "termhost: \(name): \(plugin) is running another command in the daemon; run it again once that ended\n"
                _ = text.withCString { Glibc.write(stdio.error, $0, strlen($0)) }
                return 1
            }
            taken = true
        }
        defer { if taken { commandSlots.give(plugin, shared: shared) } }
        let call = lifecycle.calls.enter(instance, feature: owner, source: feature.descriptor.source, command: name)
        CommandDepth.enter()
        defer {
            CommandDepth.leave()
            lifecycle.calls.leave(call)
        }
        let stdio = sceneStdio.withLock { $0[scene] } ?? .process
        return CommandSlots.holding(plugin) {
            instance.run(command: name, arguments: Array(argv.dropFirst()), scene: scene, json: json, stdio: stdio)
        }
    }

    /// Shuts features down (bounded), then calls each plugin's deinit() unless a feature of it
    /// was abandoned mid-shutdown. Idempotent.
    @discardableResult
    public func shutdown() -> ShutdownOutcome {
        shutdownLock.lock()
        defer { shutdownLock.unlock() }
        if let shutdownOutcome { return shutdownOutcome }
        let outcome = lifecycle.shutdown()
        shutdownOutcome = outcome
        for id in outcome.abandoned {
            services.log.log(.error, "host", "feature '\(id)' did not finish shutting down within \(options.shutdownBound) s; abandoned")
        }
        var abandonedPlugins = Set(outcome.abandoned.compactMap { id in
            resolution.features.first { $0.descriptor.id.rawValue == id }?.descriptor.source })
        // A plugin a command is still running in (one that ignored the cancel request) keeps
        // its state: deinit() would free it under the command.
        abandonedPlugins.formUnion(outcome.stillInCall.map(\.source))
        for (record, entry) in loaded.reversed() where !abandonedPlugins.contains(record.label) && !outcome.boundExpired {
            CallTracker.inside(crashSlots[record.label] ?? CallTracker.unregistered, "deinit") { entry.deinitialize() }
            services.events.unsubscribeAll(owner: record.manifest!.id)
        }
        return outcome
    }
}
