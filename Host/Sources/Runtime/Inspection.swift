import Foundation
import TermhostLoader
import TermhostRegistry
import TermhostServices

/// Everything the host can learn without running plugin code in its own process: discovery,
/// preflight checks, the probe (in a child process, or its cached outcome), and the registry's
/// resolution of the manifests' features under the policy. `plugins list`, `features` and
/// `doctor` print this; `HostRuntime.start` continues from it.
public struct Inspection: Sendable {
    public var catalog: PluginCatalog
    /// Open, checked library descriptors of the records that passed, by directory.
    var descriptors: [String: Int32] = [:]
    public var policy: EffectivePolicy
    /// Problems reading the policy files; they stop a real start.
    public var policyErrors: [RegistryError]
    public var duplicates: [RegistryError] = []
    public var resolution: Resolution
    /// Who may use termhost.sync-store/1, from the operator policy and the plugin sets.
    public var syncProvider: SyncProviderChoice = .builtIn

    public var records: [PluginRecord] { catalog.records }

    /// probe: false reads cached probe outcomes only (listing); true runs the probe for
    /// unknown or changed libraries (doctor, start).
    /// brokenServices: host services known to be unusable; nil diagnoses the store read-only.
    public static func run(_ options: RuntimeOptions, probe: Bool, brokenServices: [String: String]? = nil) -> Inspection {
        let brokenServices = brokenServices ?? SQLiteStore.diagnose(path: options.paths.store).map { ["termhost.store/1": $0] } ?? [:]
        var errors: [RegistryError] = []
        var policy = DeploymentPolicy()
        var user = UserConfig()
        // A policy that exists but cannot be read is an error, never "no policy": the operator
        // may have disabled something in it (fail closed).
        if present(options.paths.operatorPolicy, &errors) {
            do { policy = try DeploymentPolicy.load(from: options.paths.operatorPolicy) } catch { errors.append(error) }
        }
        var catalog = PluginCatalog.discover(options.searchPath, safeMode: options.safeMode, trust: pluginSetTrust(policy, options.paths))
        var cache = options.paths.probeCache.map(ProbeCache.load(path:)) ?? .temporary()
        var fds: [String: Int32] = [:]
        for i in catalog.records.indices where catalog.records[i].failure == nil {
            guard let fd = Preflight.check(&catalog.records[i], catalog: catalog, host: options.host) else { continue }
            if let cached = cache.current(for: catalog.records[i], timeout: options.probe.boundedTimeout) {
                catalog.records[i].probe = "cached"
                catalog.records[i].probeMilliseconds = cached.probeMilliseconds
                apply(cached.outcome, to: &catalog.records[i])
            } else if probe {
                let start = Date()
                let outcome = options.probe.probe(fd: fd, record: catalog.records[i])
                let ms = Date().timeIntervalSince(start) * 1000
                cache.store(outcome, for: catalog.records[i], milliseconds: ms)
                catalog.records[i].probe = "probed"
                catalog.records[i].probeMilliseconds = ms
                apply(outcome, to: &catalog.records[i])
            } else {
                catalog.records[i].probe = nil
            }
            if catalog.records[i].failure == nil { fds[catalog.records[i].directory] = fd } else {
                close(fd)
                catalog.records[i].closePinnedLibraries()
            }
        }
        if probe { cache.save() }
        if let problem = cache.problem { catalog.problems.append(problem) }

        if present(options.paths.userConfig, &errors) {
            do { user = try UserConfig.load(from: options.paths.userConfig) } catch { errors.append(error) }
        }
        let effective = EffectivePolicy(policy: policy, user: user, synced: SyncedSettingsStore.load(storePath: options.paths.store))

        var inspection = Inspection(catalog: catalog, descriptors: fds, policy: effective, policyErrors: errors,
                                    resolution: FeatureRegistry().resolve(effective, hostServices: []))
        inspection.syncProvider = SyncProviderChoice.resolve(policy: policy, pluginSets: catalog.pluginSets)
        var registry = FeatureRegistry()
        for record in catalog.records where record.failure == nil {
            for d in record.manifest!.descriptors(source: record.label) {
                do { try registry.register(d) } catch { inspection.duplicates.append(error) }
            }
        }
        inspection.resolution = registry.resolve(effective, hostServices: HostServices.hostServiceIDs.subtracting(brokenServices.keys),
                                                 brokenServices: brokenServices, reservedCommands: HostRuntime.builtInCommands,
                                                 pinnedSources: catalog.pinnedSources)
        return inspection
    }

    /// What plugin set signatures must satisfy under the operator policy. (A policy that exists
    /// but cannot be read stops a real start anyway, see `policyErrors`.)
    static func pluginSetTrust(_ policy: DeploymentPolicy, _ paths: HostPaths) -> PluginSetTrust {
        let files = policy.signerFiles(policyPath: paths.operatorPolicy)
        return PluginSetTrust(required: policy.requireSignedPluginSets, allowedSigners: files.allowed,
                              revokedSigners: files.revoked,
                              requirement: "\(policy.source) requires signed plugin sets (requireSignedPluginSets)")
    }

    /// true when the file exists; an error (not false) when it cannot be told, e.g. EACCES on
    /// /etc/termhost.
    static func present(_ path: String, _ errors: inout [RegistryError]) -> Bool {
        guard !path.isEmpty else { return false }
        var st = stat()
        if stat(path, &st) == 0 { return true }
        if errno != ENOENT && errno != ENOTDIR {
            errors.append(.unreadableFile(file: path, reason: String(cString: strerror(errno))))
        }
        return false
    }

    static func apply(_ outcome: ProbeCache.Outcome, to record: inout PluginRecord) {
        switch outcome {
        case .passed(let report):
            record.loadMilliseconds = report.loadMilliseconds
            record.initMilliseconds = report.initMilliseconds
        case .quarantined(let failure):
            record.failure = failure
        }
    }

    /// Closes the descriptors kept for loading (when the caller does not load).
    public mutating func closeDescriptors() {
        for fd in descriptors.values { close(fd) }
        descriptors = [:]
        for i in catalog.records.indices { catalog.records[i].closePinnedLibraries() }
    }
}
