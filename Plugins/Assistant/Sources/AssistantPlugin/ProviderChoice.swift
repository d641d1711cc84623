import AssistantCore
import TermhostSDK

/// The model provider a run uses: `--provider NAME`, else the only one configured.
enum ProviderChoice {
    static func resolve(_ name: String?, host: PluginHost) throws(PluginError) -> (provider: any ModelProvider, name: String) {
        throw PluginError("no model provider is configured; add one with 'termhost assistant provider add'")
    }
}
