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
            Command("mcp", summary: "The tool catalog for MCP clients (Claude Code, Codex) over stdio, under the same policy",
                    usage: AssistantUsage.mcp),
            Command("approvals", summary: "Answer what background runs ask, from any terminal: list, allow, deny",
                    usage: ApprovalsCommand.usage),
        ],
        // A run's state is its own (its engine, gate, printer); what runs share is behind locks
        // (ActiveRuns, PendingApprovals, the store): in the daemon `approvals` answers while
        // another client's `ask` runs.
        concurrentCommands: true)

    let host: PluginHost
    /// Audits `termhost tools call` (CommandLineToolAudit) while this feature lives.
    private let commandLineAudit: Events.Subscription?
    init(host: PluginHost, scene: SceneInfo) throws {
        self.host = host
        commandLineAudit = CommandLineToolAudit.subscribe(host)
    }

    /// Runs a crash or SIGKILL left running are marked interrupted, their open tool calls
    /// answered "outcome unknown"; never resumed.
    func activate() throws {
        guard let store = host.store else { return }
        do {
            for id in try RunStore(store: store).markInterrupted() {
                host.log(.warning, "assistant run \(id) was interrupted (its process ended first); its open tool calls are marked outcome unknown")
            }
        } catch {
            host.log(.error, "assistant: cannot check for interrupted runs: \(error)")
        }
    }

    /// NOTES section 5: no model request or tool call starts after this, running tools are
    /// cancelled and awaited, and each run is saved as stopped, inside the host's 3 s bound.
    func shutdown() { ActiveRuns.stopAll(waitingAtMost: 2.5) }

    func run(_ command: CommandInvocation) -> Int32 {
        switch command.command {
        case "ask": AskCommand(host: host, invocation: command).run()
        case "mcp": MCPCommand(host: host, invocation: command).run()
        case "approvals": ApprovalsCommand(host: host, invocation: command).run()
        default: AssistantCommand(host: host, invocation: command).run()
        }
    }
}

let plugin = Plugin(id: "org.termhost.assistant", version: "0.1.0", features: [AssistantFeature.self])

@_cdecl("termhost_plugin_entry")
public func termhostPluginEntry() -> UnsafeRawPointer { plugin.entry }
