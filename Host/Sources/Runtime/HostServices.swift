import Foundation
import TermhostLifecycle
import TermhostLoader
import TermhostRegistry
import TermhostServices

/// Where the host keeps its files, from XDG base directories (overridable for tests).
public struct HostPaths: Sendable {
    public var store: String
    public var secrets: String
    public var log: String?
    public var probeCache: String?
    public var operatorPolicy: String
    public var userConfig: String

    public init(store: String, secrets: String, log: String?, probeCache: String?, operatorPolicy: String, userConfig: String) {
        self.store = store
        self.secrets = secrets
        self.log = log
        self.probeCache = probeCache
        self.operatorPolicy = operatorPolicy
        self.userConfig = userConfig
    }

    /// Everything under one directory (tests, sandboxes).
    public static func under(_ dir: String) -> HostPaths {
        HostPaths(store: dir + "/data/termhost.db", secrets: dir + "/data/secrets.json", log: dir + "/state/termhost.log",
                  probeCache: dir + "/cache/probe-cache.json", operatorPolicy: dir + "/policy.json",
                  userConfig: dir + "/config.json")
    }

    public static func standard(_ env: [String: String] = ProcessInfo.processInfo.environment) -> HostPaths {
        HostPaths(store: XDG.dataHome(env) + "/termhost/termhost.db",
                  secrets: XDG.dataHome(env) + "/termhost/secrets.json",
                  log: XDG.stateHome(env) + "/termhost/termhost.log",
                  probeCache: XDG.cacheHome(env) + "/termhost/probe-cache.json",
                  operatorPolicy: env["TERMHOST_POLICY"] ?? "/etc/termhost/policy.json",
                  userConfig: XDG.configHome(env) + "/termhost/config.json")
    }

    /// Nothing on disk: the probe child runs plugins against these.
    public static let inMemory = HostPaths(store: ":memory:", secrets: "", log: nil, probeCache: nil,
                                           operatorPolicy: "", userConfig: "")
}

/// The host services v1 as Swift objects; `HostBridge` exposes them through the C vtables.
public final class HostServices: @unchecked Sendable {
    public let store: SQLiteStore?
    /// Why the store is unavailable, naming the file; features requiring it say so.
    public let storeProblem: String?
    public let secrets: SecretsFile
    public let log: LogSink
    public let events = EventBus()
    /// Collections plugins declared syncable (termhost.sync-store/1 reaches only these).
    public let syncables = SyncableCollections()
    /// termhost.cancel/1: signals ask running commands to stop through it.
    public let cancellation = CommandCancellation()
    /// Each scene's user environment (termhost.environment/1).
    public let environments = SceneEnvironments()
    /// termhost.daemon/1: set from RuntimeOptions.daemon at start.
    var daemonRole: DaemonRole = .cli(rerunning: false)
    /// Commands that asked to run in the daemon (termhost.daemon/1).
    public let daemonRequests = DaemonRequests()
    public let interaction: Interaction
    public var policy: EffectivePolicy
    /// Who may use termhost.sync-store/1; set by the runtime from the inspection before any init().
    public var syncProvider: SyncProviderChoice = .builtIn
    /// Commands: set by the runtime once features are resolved.
    var commandList: @Sendable () -> [(name: String, summary: String, feature: String)] = { [] }
    var runCommand: @Sendable (_ scene: UInt64, _ argv: [String]) -> Int32? = { _, _ in nil }
    /// Whether a feature is enabled after resolution (policy, dependencies, services); set by
    /// the runtime once features are resolved. Before that (plugin init, the probe) the policy
    /// in force decides.
    var resolvedFeatureEnabled: (@Sendable (FeatureID) -> Bool)?

    func featureEnabled(_ id: FeatureID) -> Bool {
        resolvedFeatureEnabled?(id) ?? (policy.disabledReason(id) == nil)
    }
    /// termhost.tools/1: set by the runtime once features are resolved.
    public internal(set) var tools: ToolService?
    /// Services provided by active features, looked up by ID.
    var providedService: @Sendable (String) -> UnsafeRawPointer? = { _ in nil }

    public static let hostServiceIDs: Set<String> = [
        "termhost.log/1", "termhost.config/1", "termhost.store/1", "termhost.secrets/1",
        "termhost.interact/1", "termhost.events/1", "termhost.commands/1",
        "termhost.cancel/1", "termhost.tools/1", "termhost.sync-store/1", "termhost.environment/1", "termhost.daemon/1",
    ]

    public init(paths: HostPaths, policy: EffectivePolicy, nonInteractive: Bool, stderrLevel: LogSink.Level) {
        log = LogSink(filePath: paths.log, stderrLevel: stderrLevel)
        var store: SQLiteStore? = nil
        var problem: String? = nil
        do { store = try SQLiteStore(path: paths.store) } catch { problem = error.message }
        self.store = store
        storeProblem = problem
        secrets = SecretsFile(path: paths.secrets.isEmpty ? nil : paths.secrets)
        interaction = Interaction(nonInteractive: nonInteractive)
        interaction.isCancelled = { [cancellation] scene in cancellation.isCancelled(scene) }
        self.policy = policy
        SyncedSettingsStore.declare(syncables)
        if let problem { log.log(.error, "host", problem) }
    }

    /// Host services that failed, with the reason, for the registry's resolution.
    public var brokenServices: [String: String] {
        storeProblem.map { ["termhost.store/1": $0, "termhost.sync-store/1": $0] } ?? [:]
    }

    public var availableServiceIDs: Set<String> {
        HostServices.hostServiceIDs.subtracting(brokenServices.keys)
    }
}
