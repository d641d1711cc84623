import AssistantCore
import Foundation
import TermhostSDK

/// One run started from a command: its store records, the tool catalog, the policy, the engine,
/// Ctrl-C (termhost.cancel/1) and shutdown wired to its admission fence, and its end saved.
struct RunSession {
    let host: PluginHost
    let invocation: CommandInvocation
    let store: RunStore
    let provider: any ModelProvider
    let providerName: String
    let mode: RunEngine.Mode
    let targetHost: String?
    /// Full access and the reviewer, as the command line asked.
    var access = RunAccess()
    /// Runs in the daemon with no client (`ask --background`): its Asks wait for any client.
    var background = false

    static let stepLimit = 50

    /// Runs `question` in `conversation`, streaming through `printer`; returns the run as saved.
    /// `watchKeys`: the conversation's Ctrl-C on a terminal stops the run only (InterruptKey).
    func run(_ question: String, conversation: String, printer: AnswerPrinter,
             watchKeys: Bool = false) -> (run: RunStore.Run?, end: RunEngine.End) {
        let tools: ToolService? = ToolService(host: host, scene: invocation.scene)
        let catalog: [RunTool]
        do { catalog = try (tools?.catalog() ?? []) + [SecretRequest.tool] } catch {
            return (nil, RunEngine.End(state: .failed, reason: "cannot read the tool catalog: \(error)"))
        }
        let control = RunControl()
        ActiveRuns.insert(control)
        defer { ActiveRuns.remove(control) }
        let registration = try? host.cancellation?.onCancel(scene: invocation.scene) { _ in control.stop() }
        defer { registration?.remove() }

        var run: RunStore.Run
        var transcript: [ChatMessage]
        do {
            run = try store.begin(conversation: conversation, question: question, mode: mode.rawValue,
                                  host: targetHost, provider: providerName)
            transcript = try store.transcript(conversation).map(\.message)
        } catch {
            return (nil, RunEngine.End(state: .failed, reason: "cannot save the run: \(error)"))
        }
        let keys = watchKeys ? InterruptKey(fd: invocation.stdinFD, control: control) : nil
        defer { keys?.end() }
        let handles = host.secrets.map { SecretHandles(vault: HostSecretVault(secrets: $0)) }
        defer { handles?.discardPending() }
        let runner = AssistantToolRunner(tools: tools, handles: handles, interact: host.interact, scene: invocation.scene,
                                         runID: run.id, prompting: { body in keys.map { $0.paused(body) } ?? body() })
        var engine = RunEngine(provider: provider, tools: catalog, runner: runner,
                               control: control, mode: mode, system: system(catalog), nextCallNumber: HostTools.nextCallID)
        engine.stepLimit = Self.stepLimit
        do {
            let limits = try CallLimits.read(host)
            engine.callsPerTurn = limits.perTurn
            engine.callsPerRun = limits.perRun
        } catch {
            let end = RunEngine.End(state: .failed, reason: error.message)
            try? store.end(run, end)
            run.state = end.state
            run.reason = end.reason
            return (run, end)
        }
        engine.provesReadOnly = Self.provesReadOnly
        engine.onText = printer.text
        engine.onCallStart = printer.callStarted
        engine.onCallEnd = printer.callEnded
        let approval = CallApproval(host: host, scene: invocation.scene, runID: run.id, mode: mode, catalog: catalog,
                                    fullAccess: access.fullAccess, reviewer: access.reviewer(for: question),
                                    waitsInDaemon: background ? (control, conversation) : nil)
        (approval.warnings + access.warnings(approval.policy)).forEach { invocation.printError("warning: \($0)") }
        if let problem = approval.problem {
            // Nothing could run: the run ends before the model is asked, and the command fails.
            let end = RunEngine.End(state: .failed, reason: "the assistant's policy is unusable: \(problem.message); nothing runs until it is fixed")
            try? store.end(run, end)
            run.state = end.state
            run.reason = end.reason
            return (run, end)
        }
        // The run's secret values, once a tool was given them, are blanked wherever they appear.
        engine.redact = { text in Redactor(knownValues: handles?.revealedValues ?? []).redact(text) }
        engine.onRefusedByRun = approval.recordRefusal
        engine.decide = { call, tool in keys.map { keys in keys.paused { approval.decide(call, tool) } } ?? approval.decide(call, tool) }
        var turn = 0
        let end = engine.run(&transcript) { message in
            if case .assistant = message { turn += 1 }
            try store.append(message, run: run, turn: turn)
        }
        printer.finishLine()
        do { try store.end(run, end) } catch {
            invocation.printError("termhost: cannot save the end of run \(run.id): \(error)")
        }
        run.state = end.state
        run.reason = end.reason
        return (run, end)
    }

    /// An ssh_exec call whose command the classifier proves read-only may run in planning.
    static func provesReadOnly(_ call: ToolCall) -> Bool {
        guard call.name == "ssh_exec",
              let arguments = try? JSONSerialization.jsonObject(with: Data(call.argumentsJSON.utf8)) as? [String: Any],
              let command = arguments["command"] as? String else { return false }
        return CommandClassifier.classify(command) == .readOnly
    }

    private func system(_ catalog: [RunTool]) -> String {
        var s = "You are Termhost's assistant, an operator for the user's SSH hosts. Use the tools to find out; do not guess. "
        s += mode == .planning
            ? "This is a planning run: only read-only tools are available; propose changes, do not make them."
            : "This is an acting run: tools that change state need the user's approval, which the host asks for."
        if let targetHost { s += " The host in question is '\(targetHost)'." }
        return s
    }
}
