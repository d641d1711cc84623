import AssistantCore
import AssistantProviders
import Foundation
import TermhostSDK

/// The model providers saved by `termhost assistant provider add` (store collection
/// "providers", one ProviderConfig JSON per name; API keys in the secrets service), and which
/// one a run uses: `--provider NAME`, else the only one saved.
enum ProviderChoice {
    static let collection = "providers"

    static func all(_ store: Store) throws -> [ProviderConfig] {
        try store.list(collection).map { item throws -> ProviderConfig in
            do { return try ProviderConfig(json: String(decoding: item.value, as: UTF8.self)) } catch {
                throw PluginError("saved provider '\(VisibleText.of(item.key))' cannot be used: \(error); remove it with 'termhost assistant provider rm \(VisibleText.of(item.key))'")
            }
        }
    }

    static func config(_ name: String?, store: Store) throws -> ProviderConfig {
        let configs = try all(store)
        if let name {
            guard let config = configs.first(where: { $0.name == name }) else {
                throw PluginError("no provider named '\(VisibleText.of(name))'; 'termhost assistant provider list' shows them")
            }
            return config
        }
        switch configs.count {
        case 0: throw PluginError("no model provider is configured; add one with 'termhost assistant provider add NAME --kind KIND --model MODEL'")
        case 1: return configs[0]
        default: throw PluginError("\(configs.count) providers are configured (\(configs.map(\.name).joined(separator: ", "))); choose one with --provider NAME")
        }
    }

    /// The provider ready to use: its API key read from the secrets service just now.
    /// `onFirstByte` starts the latency measurement (AnswerPrinter).
    static func resolve(_ name: String?, host: PluginHost,
                        onFirstByte: (@Sendable (ContinuousClock.Instant) -> Void)? = nil) throws -> (provider: any ModelProvider, name: String) {
        guard let store = host.store else { throw PluginError("the host store is unavailable") }
        let config = try config(name, store: store)
        var apiKey: String?
        if let id = config.apiKeySecretID {
            guard let secrets = host.secrets, let key = try secrets.get(id) else {
                throw PluginError("the API key of provider '\(config.name)' is missing from the secrets store; add the provider again")
            }
            apiKey = String(decoding: key, as: UTF8.self)
        }
        do {
            return (try config.makeProvider(apiKey: apiKey, options: ProviderOptions(onFirstByte: onFirstByte)), config.name)
        } catch {
            throw PluginError(error.message)
        }
    }
}
