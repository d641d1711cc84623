// The Assistant plugin: an operator that answers questions about your hosts with a model,
// calling the tools other plugins contribute (termhost.tools/1) under the policy gate, and
// keeping every conversation, run and tool call in the host store as it happens.
import CTermhost
import TermhostSDK

final class AssistantFeature: Feature {
    static let info = FeatureInfo(
        id: "org.termhost.assistant", version: "0.1.0", displayName: "Assistant",
        summary: "Ask a model about your hosts; it calls plugin tools under your approval policy and keeps a history.",
        order: 500,
        // ABI.md: a consumer of feature-provided tools is ordered after the features that offer them.
        after: ["org.termhost.ssh", "org.termhost.sftp", "org.termhost.metrics", "org.termhost.forwarding"],
        requiresServices: ["termhost.store/1"],
        commands: [
            Command("ask", summary: "Ask the assistant one question; streams the answer",
                    usage: AssistantUsage.ask),
            Command("assistant", summary: "A conversation with the assistant; history, show, rm",
                    usage: AssistantUsage.assistant),
        ])

    let host: PluginHost
    init(host: PluginHost, scene: SceneInfo) throws { self.host = host }

    func run(_ command: CommandInvocation) -> Int32 {
        switch command.command {
        case "ask": AskCommand(host: host, invocation: command).run()
        default: AssistantCommand(host: host, invocation: command).run()
        }
    }
}

let plugin = Plugin(id: "org.termhost.assistant", version: "0.1.0", features: [AssistantFeature.self])

@_cdecl("termhost_plugin_entry")
public func termhostPluginEntry() -> UnsafeRawPointer { plugin.entry }
