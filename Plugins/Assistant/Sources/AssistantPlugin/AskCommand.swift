import AssistantCore
import Foundation
import TermhostSDK

/// `termhost ask [--host H] [--acting] [--provider NAME] [--json] [--full-access]
/// [--reviewer NAME [--reviewer-timeout S]] "QUESTION"`: one run in a new conversation, the
/// answer streamed. The exit status says how the run ended: 0 finished,
/// 1 failed, 130 stopped (Ctrl-C, SIGTERM); 2 a usage error.
struct AskCommand {
    let host: PluginHost
    let invocation: CommandInvocation

    static let arguments = CommandArguments("termhost ask", usage: "usage: " + AssistantUsage.ask,
                                            options: [.value("--host"), .flag("--acting"), .value("--provider"), .flag("--json"), .flag("--background")] + RunAccess.options)

    func run() -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try invocation.parse(with: Self.arguments) } catch { return error.status }
        let question = parsed.arguments.joined(separator: " ").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !question.isEmpty else {
            return invocation.reportUsageError(CommandUsageError(command: "termhost ask", problem: "a question is required", usage: "usage: " + AssistantUsage.ask))
        }
        let json = invocation.jsonOutput || parsed.has("--json")
        if parsed.has("--background") {
            if let status = invocation.requireDaemon(host, "termhost: ask --background") { return status }
        }
        guard let store = host.store.map(RunStore.init) else {
            invocation.printError("termhost: ask: the host store is unavailable")
            return 1
        }
        let setup: RunSetup
        do { setup = try RunSetup.resolve(parsed, host: host, invocation: invocation, command: "ask") } catch { return error.status }
        let targetHost = parsed.value("--host")
        let conversation: String
        do { conversation = try store.newConversation(title: question, host: targetHost) } catch {
            invocation.printError("termhost: ask: cannot save the conversation: \(error)")
            return 1
        }
        let mode: RunEngine.Mode = parsed.has("--acting") ? .acting : .planning
        if parsed.has("--background") {
            return background(question, conversation: conversation, store: store, setup: setup, mode: mode, targetHost: targetHost, json: json)
        }
        let session = RunSession(host: host, invocation: invocation, store: store, provider: setup.provider,
                                 providerName: setup.providerName, mode: mode, targetHost: targetHost, access: setup.access)
        let printer = AnswerPrinter(invocation: invocation, quiet: json, clock: setup.clock)
        let (run, end) = session.run(question, conversation: conversation, printer: printer)
        if json {
            let transcript = (try? store.transcript(conversation)) ?? []
            invocation.print(HistoryView.json(run: run, conversation: conversation, end: end, transcript: transcript))
        } else {
            report(end)
        }
        return end.state.exitStatus
    }

    private func report(_ end: RunEngine.End) {
        switch end.state {
        case .failed: invocation.printError("termhost: ask: \(VisibleText.of(end.reason ?? "the run failed"))")
        case .stopped: invocation.printError("termhost: ask: stopped")
        default: break
        }
    }
}
