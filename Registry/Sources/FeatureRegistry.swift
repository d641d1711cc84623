/// The set of known features, each with its descriptor and factory. An injected value, never a
/// global: the host builds one per process from the loaded plugins, tests build their own.
public struct FeatureRegistry: Sendable {
    public struct Registration: Sendable {
        public let descriptor: FeatureDescriptor
        /// nil when the feature is only known from a manifest (listing without loading).
        public let factory: (any FeatureFactory)?
    }

    public private(set) var registrations: [FeatureID: Registration] = [:]

    public init() {}

    /// Adds a feature. A second feature with the same ID is refused, naming both sources.
    public mutating func register(_ descriptor: FeatureDescriptor,
                                  factory: (any FeatureFactory)? = nil) throws(RegistryError) {
        if let existing = registrations[descriptor.id] {
            throw .duplicateFeature(descriptor.id, first: existing.descriptor.source, second: descriptor.source)
        }
        registrations[descriptor.id] = Registration(descriptor: descriptor, factory: factory)
    }

    public var ids: Set<FeatureID> { Set(registrations.keys) }

    /// Applies the policy, checks dependencies and services, and orders what remains.
    /// hostServices: the service IDs the host itself offers ("termhost.log/1", ...);
    /// brokenServices: host services that failed to start, with the reason (a store that
    /// cannot open), so that dependents say why they are unavailable.
    /// reservedCommands: names the host itself uses ("plugins", "doctor"...); a feature cannot
    /// take them.
    /// pinnedSources: the `source` of every descriptor that comes from a plugin a distribution's
    /// plugin set pins (verified by hash). A command such a plugin declares cannot be taken by a
    /// plugin outside the set, whatever its order: otherwise any plugin dropped in the user's
    /// directory with a smaller order key would receive `termhost exec` and the user's input.
    public func resolve(_ policy: EffectivePolicy, hostServices: Set<String>,
                        brokenServices: [String: String] = [:], reservedCommands: Set<String> = [],
                        pinnedSources: Set<String> = []) -> Resolution {
        var state: [FeatureID: FeatureState] = [:]
        for id in registrations.keys {
            state[id] = policy.disabledReason(id).map { .disabled($0) } ?? .enabled
        }
        var ordered: [FeatureID] = []
        // Each pass can only remove features, so this reaches a fixed point.
        while true {
            var changed = false
            func drop(_ id: FeatureID, _ why: RegistryError) {
                if state[id] == .enabled { state[id] = .unavailable(why); changed = true }
            }
            for id in registrations.keys.sorted() where state[id] == .enabled {
                let d = registrations[id]!.descriptor
                for dep in d.requiresFeatures {
                    switch state[dep] {
                    case nil: drop(id, .missingDependency(id, needs: dep))
                    case .disabled?: drop(id, .disabledDependency(id, needs: dep))
                    case .unavailable?: drop(id, .unavailableDependency(id, needs: dep))
                    case .enabled?: break
                    }
                }
            }
            // One provider per service: a second enabled feature providing it is a conflict,
            // named, not a silent choice of whichever the lookup finds first. The feature that
            // starts first (order key, then ID) keeps it.
            var providers: [String: FeatureID] = [:]
            let starting = registrations.values.map(\.descriptor).filter { state[$0.id] == .enabled }
                .sorted { ($0.order, $0.id) < ($1.order, $1.id) }
            for d in starting {
                for service in d.providesServices {
                    if let first = providers[service] { drop(d.id, .serviceConflict(service, feature: d.id, providedBy: first)) }
                    else { providers[service] = d.id }
                }
            }
            if changed { continue }
            let offered = hostServices.union(registrations.values
                .filter { state[$0.descriptor.id] == .enabled }
                .flatMap(\.descriptor.providesServices))
            for id in registrations.keys.sorted() where state[id] == .enabled {
                for service in registrations[id]!.descriptor.requiresServices where !offered.contains(service) {
                    if let reason = brokenServices[service] {
                        drop(id, .serviceUnavailable(id, service: service, reason: reason))
                    } else {
                        drop(id, .missingService(id, service: service))
                    }
                }
            }
            if changed { continue }
            let enabled = registrations.values.map(\.descriptor).filter { state[$0.id] == .enabled }
            switch OrderResolver.order(enabled) {
            case .success(let order):
                ordered = order
            case .failure(let cycles):
                for members in cycles.members { for id in members { drop(id, .cycle(members)) } }
                continue
            }
            break
        }

        let rest = registrations.values.map(\.descriptor).filter { state[$0.id] != .enabled }
            .sorted { ($0.order, $0.id) < ($1.order, $1.id) }.map(\.id)
        let features = (ordered + rest).map { id in
            ResolvedFeature(registration: registrations[id]!, state: state[id]!)
        }
        var problems = policy.problems(known: ids)
        var owners: [String: FeatureID] = [:]
        // Every pinned feature's commands, whatever its state: a pinned feature that is disabled
        // or lacks a dependency must not hand its command to an unpinned plugin either.
        var pinnedCommands: [String: FeatureID] = [:]
        for f in features where pinnedSources.contains(f.descriptor.source) {
            for command in f.descriptor.commands where pinnedCommands[command.name] == nil {
                pinnedCommands[command.name] = f.descriptor.id
            }
        }
        for f in features where f.state == .enabled {
            for command in f.descriptor.commands {
                if !CommandDescriptor.isValidName(command.name) {
                    problems.append(.invalidCommandName(command.name, feature: f.descriptor.id))
                } else if reservedCommands.contains(command.name) {
                    problems.append(.reservedCommand(command.name, feature: f.descriptor.id))
                } else if let pinned = pinnedCommands[command.name], !pinnedSources.contains(f.descriptor.source) {
                    problems.append(.commandOfPinnedPlugin(command.name, feature: f.descriptor.id, source: f.descriptor.source,
                                                           pinnedFeature: pinned))
                } else if let kept = owners[command.name] {
                    problems.append(.duplicateCommand(command.name, kept: kept, dropped: f.descriptor.id))
                } else {
                    owners[command.name] = f.descriptor.id
                }
            }
        }
        // Tools: only a process-scope instance can serve a call from any scene (or none, for
        // MCP); a bad tool or a clash refuses that tool, named, and the feature runs on.
        var toolOwners: [String: FeatureID] = [:]
        for f in features where f.state == .enabled {
            for tool in f.descriptor.tools {
                if f.descriptor.scope != .process {
                    problems.append(.toolRefused(tool.name, feature: f.descriptor.id,
                                                 reason: "only process-scope features may offer tools, and it is \(f.descriptor.scope)-scope"))
                } else if let reason = tool.problem {
                    problems.append(.toolRefused(tool.name, feature: f.descriptor.id, reason: reason))
                } else if let kept = toolOwners[tool.name] {
                    problems.append(.duplicateTool(tool.name, kept: kept, dropped: f.descriptor.id))
                } else {
                    toolOwners[tool.name] = f.descriptor.id
                }
            }
        }
        var fatal: [RegistryError] = []
        for id in policy.policy.require {
            switch state[id] {
            case nil:
                fatal.append(.requiredFeatureNotAvailable(id, source: policy.policy.source,
                                                          reason: "no installed plugin provides it"))
            case .disabled(let why)?:
                fatal.append(.requiredFeatureNotAvailable(id, source: policy.policy.source, reason: why))
            case .unavailable(let error)?:
                fatal.append(.requiredFeatureNotAvailable(id, source: policy.policy.source, reason: error.description))
            case .enabled?: break
            }
        }
        return Resolution(features: features, commandOwners: owners, toolOwners: toolOwners, problems: problems, fatal: fatal)
    }
}

public enum FeatureState: Hashable, Sendable {
    case enabled
    case disabled(String)
    case unavailable(RegistryError)

    /// The reason a feature does not run, for `termhost features`.
    public var reason: String? {
        switch self {
        case .enabled: nil
        case .disabled(let why): why
        case .unavailable(let error): error.description
        }
    }

    public var label: String {
        switch self {
        case .enabled: "enabled"
        case .disabled: "disabled"
        case .unavailable: "unavailable"
        }
    }
}

public struct ResolvedFeature: Sendable {
    public let registration: FeatureRegistry.Registration
    public let state: FeatureState
    public var descriptor: FeatureDescriptor { registration.descriptor }
}

/// The outcome of `FeatureRegistry.resolve`: every feature in start order (enabled ones first,
/// in dependency order), problems to report, and fatal errors that stop the host.
public struct Resolution: Sendable {
    public let features: [ResolvedFeature]
    /// Command name to the enabled feature that owns it.
    public let commandOwners: [String: FeatureID]
    /// Tool name to the enabled feature that offers it (refused tools are in `problems`).
    public let toolOwners: [String: FeatureID]
    public let problems: [RegistryError]
    public let fatal: [RegistryError]

    public var enabled: [ResolvedFeature] { features.filter { $0.state == .enabled } }
    public func feature(_ id: FeatureID) -> ResolvedFeature? { features.first { $0.descriptor.id == id } }

    /// The tools the catalog offers, sorted by name, each with the feature that offers it.
    public var tools: [(tool: ToolDescriptor, feature: FeatureID)] {
        toolOwners.keys.sorted().compactMap { name in
            let owner = toolOwners[name]!
            return feature(owner)?.descriptor.tools.first { $0.name == name }.map { ($0, owner) }
        }
    }
}
