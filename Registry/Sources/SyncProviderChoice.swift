/// Which plugin may use termhost.sync-store/1 (other plugins' syncable records), and who said so.
///
/// Precedence: the operator's policy setting `provider` of `org.termhost.sync`, then the
/// `syncProvider` of an installed plugin set, then `org.termhost.sync`. A user's configuration
/// is never read: the vault would otherwise be one config edit away from any plugin. When a
/// source is present but unusable (a policy value that is not a plugin ID, a set naming a plugin
/// it does not list, two sets naming different plugins), nobody gets the table: falling back to
/// the default would hand the vault to a plugin nobody chose.
public struct SyncProviderChoice: Sendable, Equatable, Encodable {
    /// The provider's plugin ID; nil when `problem` lends the table to nobody.
    public let plugin: String?
    /// Where the choice came from, as a phrase: "the built-in default", "plugin set PATH", ...
    public let source: String
    /// Why nobody may use the table; doctor lists it among the problems.
    public let problem: String?

    public static let defaultProvider = "org.termhost.sync"
    public static let builtIn = SyncProviderChoice(plugin: defaultProvider, source: "the built-in default", problem: nil)

    public init(plugin: String?, source: String, problem: String?) {
        self.plugin = plugin
        self.source = source
        self.problem = problem
    }

    /// The choice for an operator policy and the plugin sets installed (path and set).
    public static func resolve(policy: DeploymentPolicy, pluginSets: [(path: String, set: PluginSet)]) -> SyncProviderChoice {
        if let value = policy.settings[defaultProvider]?["provider"] {
            let source = "the setting 'provider' of \(defaultProvider) in \(policy.source)"
            guard case .string(let id) = value, FeatureID.isValid(id) else {
                return SyncProviderChoice(plugin: nil, source: source,
                                          problem: "\(source) is not a plugin ID such as \(defaultProvider), so no plugin may use the sync store")
            }
            return SyncProviderChoice(plugin: id, source: source, problem: nil)
        }
        let naming = pluginSets.filter { $0.set.syncProvider != nil }
        guard let first = naming.first, let id = first.set.syncProvider else { return builtIn }
        let source = "the syncProvider of plugin set \(first.path)"
        if let other = naming.first(where: { $0.set.syncProvider != id }) {
            return SyncProviderChoice(plugin: nil, source: source,
                problem: "plugin sets \(first.path) and \(other.path) name different sync providers ('\(id)' and '\(other.set.syncProvider!)'), so no plugin may use the sync store; set the operator policy's 'provider' of \(defaultProvider) to choose")
        }
        if let stray = naming.first(where: { $0.set.entry(for: id) == nil }) {
            return SyncProviderChoice(plugin: nil, source: source,
                problem: "plugin set \(stray.path) names '\(id)' as its sync provider but does not list that plugin, so no plugin may use the sync store")
        }
        return SyncProviderChoice(plugin: id, source: source, problem: nil)
    }
}
