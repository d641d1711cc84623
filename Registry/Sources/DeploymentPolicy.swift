import Foundation
#if canImport(TermhostSDK)
import TermhostSDK   // PathText; the fuzz targets compile PathText.swift in instead
#endif

/// The operator's deployment policy (`/etc/termhost/policy.json`): which features run, which
/// are required, their settings, and which settings a user may override.
///
/// ```json
/// { "default": "enabled",
///   "disable": ["org.termhost.assistant"],
///   "require": ["org.termhost.ssh"],
///   "settings": { "org.termhost.sftp": { "maxActive": 15 } },
///   "userOverridable": { "org.termhost.sftp": ["maxActive"] },
///   "requireSignedPluginSets": true,
///   "allowedSigners": "/etc/termhost/allowed_signers" }
/// ```
public struct DeploymentPolicy: Sendable, Equatable, Codable {
    public enum Default: String, Sendable, Codable {
        case enabled, disabled

        public init(from decoder: any Decoder) throws {
            let raw = try decoder.singleValueContainer().decode(String.self)
            guard let value = Default(rawValue: raw) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                        debugDescription: "expected \"enabled\" or \"disabled\", found \"\(raw)\""))
            }
            self = value
        }
    }

    /// Features not named in `enable` or `disable` follow this; "enabled" when absent.
    public var `default`: Default
    public var enable: [FeatureID]
    public var disable: [FeatureID]
    /// The host refuses to start unless each of these is available and enabled.
    public var require: [FeatureID]
    public var settings: [String: [String: JSONValue]]
    /// Per feature, the setting keys a user's config may override ("*" for all).
    public var userOverridable: [String: [String]]
    /// Plugin sets must carry a signature by an allowed signer (plugin-set.json.sig); false when absent.
    public var requireSignedPluginSets: Bool
    /// The allowed signers file (ssh-keygen's format) plugin set signatures are checked against;
    /// absent: `allowed_signers` beside the policy file. Relative paths start there too.
    public var allowedSigners: String?
    /// The revoked signers file (public keys, one per line); absent: `revoked_signers` beside the policy file.
    public var revokedSigners: String?
    /// Where the policy came from, for messages. Not part of the file.
    public var source: String

    public init(default: Default = .enabled, enable: [FeatureID] = [], disable: [FeatureID] = [],
                require: [FeatureID] = [], settings: [String: [String: JSONValue]] = [:],
                userOverridable: [String: [String]] = [:], requireSignedPluginSets: Bool = false,
                allowedSigners: String? = nil, revokedSigners: String? = nil, source: String = "built-in defaults") {
        self.default = `default`
        self.enable = enable
        self.disable = disable
        self.require = require
        self.settings = settings
        self.userOverridable = userOverridable
        self.requireSignedPluginSets = requireSignedPluginSets
        self.allowedSigners = allowedSigners
        self.revokedSigners = revokedSigners
        self.source = source
    }

    enum CodingKeys: String, CodingKey {
        case `default`, enable, disable, require, settings, userOverridable, requireSignedPluginSets, allowedSigners, revokedSigners
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.default = try c.decodeIfPresent(Default.self, forKey: .default) ?? .enabled
        enable = try c.decodeIfPresent([FeatureID].self, forKey: .enable) ?? []
        disable = try c.decodeIfPresent([FeatureID].self, forKey: .disable) ?? []
        require = try c.decodeIfPresent([FeatureID].self, forKey: .require) ?? []
        settings = try c.decodeIfPresent([String: [String: JSONValue]].self, forKey: .settings) ?? [:]
        userOverridable = try c.decodeIfPresent([String: [String]].self, forKey: .userOverridable) ?? [:]
        requireSignedPluginSets = try c.decodeIfPresent(Bool.self, forKey: .requireSignedPluginSets) ?? false
        allowedSigners = try c.decodeIfPresent(String.self, forKey: .allowedSigners)
        revokedSigners = try c.decodeIfPresent(String.self, forKey: .revokedSigners)
        source = "policy"
    }

    public static func load(from path: String) throws(RegistryError) -> DeploymentPolicy {
        try decode(BoundedFile.read(path, cap: BoundedFile.policyCap), file: path)
    }

    /// Validates policy bytes already read; `path` names them in errors.
    public static func decode(_ data: Data, file path: String) throws(RegistryError) -> DeploymentPolicy {
        var policy = try JSONDocument.decode(DeploymentPolicy.self, from: data, file: path)
        policy.source = "operator policy \(path)"
        for (field, keys) in [("settings", Array(policy.settings.keys)), ("userOverridable", Array(policy.userOverridable.keys))] {
            for key in keys.sorted() where !FeatureID.isValid(key) {
                throw .invalidDocument(file: path, field: field, detail: RegistryError.invalidID(key).description)
            }
        }
        for (field, value) in [("allowedSigners", policy.allowedSigners), ("revokedSigners", policy.revokedSigners)] {
            if let value, value.isEmpty || value.utf8.contains(0) || value.utf8.count > 4095 {
                throw .invalidDocument(file: path, field: field, detail: "expected a file path")
            }
        }
        return policy
    }

    /// The signer files for plugin sets: as named, a relative path starting at the directory
    /// of the policy file `policyPath`, and by default `allowed_signers` and `revoked_signers` there.
    public func signerFiles(policyPath: String) -> (allowed: String, revoked: String) {
        let dir = policyPath.isEmpty ? "/etc/termhost" : PathText.parent(policyPath)
        func resolve(_ path: String?, _ name: String) -> String {
            let p = path ?? name
            return p.hasPrefix("/") ? p : (dir.isEmpty ? "." : dir) + "/" + p
        }
        return (resolve(allowedSigners, "allowed_signers"), resolve(revokedSigners, "revoked_signers"))
    }

    /// Every feature ID the policy mentions, with the field that mentions it.
    var mentionedIDs: [FeatureID] {
        let keyed = (Array(settings.keys) + Array(userOverridable.keys)).compactMap { try? FeatureID($0) }
        return enable + disable + require + keyed
    }
}

/// The user's own configuration (`$XDG_CONFIG_HOME/termhost/config.json`). It can disable any
/// feature that is not required, enable only what the operator did not disable, and set only
/// the settings the operator made overridable.
public struct UserConfig: Sendable, Equatable, Codable {
    public var enable: [FeatureID]
    public var disable: [FeatureID]
    public var settings: [String: [String: JSONValue]]
    public var source: String

    public init(enable: [FeatureID] = [], disable: [FeatureID] = [],
                settings: [String: [String: JSONValue]] = [:], source: String = "user config") {
        self.enable = enable
        self.disable = disable
        self.settings = settings
        self.source = source
    }

    enum CodingKeys: String, CodingKey { case enable, disable, settings }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        enable = try c.decodeIfPresent([FeatureID].self, forKey: .enable) ?? []
        disable = try c.decodeIfPresent([FeatureID].self, forKey: .disable) ?? []
        settings = try c.decodeIfPresent([String: [String: JSONValue]].self, forKey: .settings) ?? [:]
        source = "user config"
    }

    public static func load(from path: String) throws(RegistryError) -> UserConfig {
        var config = try JSONDocument.load(UserConfig.self, from: path, cap: BoundedFile.policyCap)
        config.source = "user config \(path)"
        return config
    }
}

/// The policy, the user's config and the user's synced settings combined: what each feature's
/// state is and why, and the effective settings. Problems (unknown IDs, refused user choices)
/// are collected, not thrown.
public struct EffectivePolicy: Sendable {
    public let policy: DeploymentPolicy
    public let user: UserConfig
    public let synced: SyncedSettings

    public init(policy: DeploymentPolicy = DeploymentPolicy(), user: UserConfig = UserConfig(),
                synced: SyncedSettings = SyncedSettings()) {
        self.policy = policy
        self.user = user
        self.synced = synced
    }

    /// nil when the feature may run, else the reason it is disabled.
    public func disabledReason(_ id: FeatureID) -> String? {
        if policy.require.contains(id) { return nil }
        if policy.disable.contains(id) { return "disabled by \(policy.source)" }
        if policy.default == .disabled && !policy.enable.contains(id) {
            return "not enabled by \(policy.source) (its default is disabled)"
        }
        if user.disable.contains(id) { return "disabled by \(user.source)" }
        return nil
    }

    /// Where the effective value of a setting comes from. For a key the policy lets users
    /// override: the user config file, else the synced settings, else the operator's value (the
    /// deployment's default); for any other key only the operator's value.
    public enum Layer: String, Sendable { case policy, userConfig, synced }

    /// The effective value of a setting and its layer; nil when unset (the feature's default).
    public func resolved(_ id: FeatureID, _ key: String) -> (value: JSONValue, layer: Layer)? {
        if overridable(id, key) {
            if let value = user.settings[id.rawValue]?[key] { return (value, .userConfig) }
            if let value = synced.settings[id.rawValue]?[key] { return (value, .synced) }
        }
        return policy.settings[id.rawValue]?[key].map { ($0, .policy) }
    }

    public func setting(_ id: FeatureID, _ key: String) -> JSONValue? {
        resolved(id, key)?.value
    }

    public func settings(for id: FeatureID) -> [String: JSONValue] {
        var merged = policy.settings[id.rawValue] ?? [:]
        for (key, value) in synced.settings[id.rawValue] ?? [:] where overridable(id, key) { merged[key] = value }
        for (key, value) in user.settings[id.rawValue] ?? [:] where overridable(id, key) { merged[key] = value }
        return merged
    }

    /// Whether the policy lets users set `key` of `id` (in their config file or synced).
    public func overridable(_ id: FeatureID, _ key: String) -> Bool {
        let keys = policy.userOverridable[id.rawValue] ?? []
        return keys.contains(key) || keys.contains("*")
    }

    /// Problems with the two files against the set of known features.
    public func problems(known: Set<FeatureID>) -> [RegistryError] {
        var out: [RegistryError] = []
        var seen = Set<FeatureID>()
        for id in policy.mentionedIDs where !known.contains(id) && seen.insert(id).inserted {
            out.append(.unknownFeatureInPolicy(id, source: policy.source))
        }
        let userIDs = user.enable + user.disable + user.settings.keys.compactMap { try? FeatureID($0) }
        for id in userIDs where !known.contains(id) && seen.insert(id).inserted {
            out.append(.unknownFeatureInPolicy(id, source: user.source))
        }
        for id in user.enable where known.contains(id) {
            if policy.disable.contains(id) || (policy.default == .disabled && !policy.enable.contains(id)) {
                out.append(.userCannotEnable(id, source: user.source))
            }
        }
        for (settings, source) in [(user.settings, user.source), (synced.settings, SyncedSettings.source)] {
            for raw in settings.keys.sorted() {
                guard let id = try? FeatureID(raw), known.contains(id) else { continue }
                for key in settings[raw]!.keys.sorted() where !overridable(id, key) {
                    out.append(.settingNotOverridable(id, key: key, source: source))
                }
            }
        }
        return out + synced.rejected
    }
}
