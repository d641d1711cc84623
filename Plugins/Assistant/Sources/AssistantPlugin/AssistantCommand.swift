import AssistantCore
import Foundation
import TermhostSDK

/// `termhost assistant`: a conversation (lines read from standard input, answers streamed,
/// Ctrl-C stops the run in progress, end of input ends the conversation), or `history`,
/// `show ID`, `rm ID`.
struct AssistantCommand {
    let host: PluginHost
    let invocation: CommandInvocation

    static let conversationArguments = CommandArguments(
        "termhost assistant", usage: "usage: " + AssistantUsage.assistant,
        options: [.value("--host"), .flag("--acting"), .value("--provider"), .value("--continue")] + RunAccess.options,
        maxArguments: 0)
    static let historyArguments = CommandArguments("termhost assistant history", usage: "usage: " + AssistantUsage.assistant,
                                                   options: [.flag("--json")], maxArguments: 0)
    static let showArguments = CommandArguments("termhost assistant show", usage: "usage: " + AssistantUsage.assistant,
                                                options: [.flag("--json")], maxArguments: 1)
    static let rmArguments = CommandArguments("termhost assistant rm", usage: "usage: " + AssistantUsage.assistant, maxArguments: 1)

    func run() -> Int32 {
        guard let store = host.store.map(RunStore.init) else {
            invocation.printError("termhost: assistant: the host store is unavailable")
            return 1
        }
        let rest = invocation.arguments.dropFirst()
        switch invocation.arguments.first {
        case "history": return history(store, rest)
        case "show": return show(store, rest)
        case "rm": return remove(store, rest)
        case "provider": return ProviderCommand(host: host, invocation: invocation).run(rest)
        case "approvals": return policyOutput(PolicyCommands.approvals(policyWords(rest), storage: StorePolicyStorage(store: store.store)))
        case "audit": return policyOutput(PolicyCommands.audit(policyWords(rest), storage: StorePolicyStorage(store: store.store)))
        default: return converse(store)
        }
    }

    /// The subcommand's words, with the host's own `--json` passed on.
    private func policyWords(_ rest: ArraySlice<String>) -> [String] {
        Array(rest) + (invocation.jsonOutput && !rest.contains("--json") ? ["--json"] : [])
    }

    private func policyOutput(_ output: PolicyCommands.Output) -> Int32 {
        if !output.stdout.isEmpty { invocation.print(String(output.stdout.dropLast())) }
        if !output.stderr.isEmpty { invocation.printError(String(output.stderr.dropLast())) }
        return output.status
    }

    private func history(_ store: RunStore, _ arguments: ArraySlice<String>) -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try invocation.parse(arguments, with: Self.historyArguments) } catch { return error.status }
        do {
            let runs = try store.runs()
            if invocation.jsonOutput || parsed.has("--json") {
                invocation.print(HistoryView.encode(runs.sorted { $0.started > $1.started }.map(HistoryView.runObject)))
            } else {
                HistoryView.historyLines(runs).forEach { invocation.print($0) }
            }
            return 0
        } catch {
            invocation.printError("termhost: assistant history: \(error)")
            return 1
        }
    }

    /// The conversation an ID names: a conversation ID, or a run ID ("<conversation>.<n>").
    private func conversation(_ id: String, _ store: RunStore) throws -> String? {
        let conversation = id.split(separator: ".").first.map(String.init) ?? id
        return try store.conversationExists(conversation) ? conversation : nil
    }

    private func show(_ store: RunStore, _ arguments: ArraySlice<String>) -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try invocation.parse(arguments, with: Self.showArguments) } catch { return error.status }
        guard let id = parsed.arguments.first else {
            return invocation.reportUsageError(CommandUsageError(command: "termhost assistant show", problem: "a conversation or run ID is required", usage: "usage: " + AssistantUsage.assistant))
        }
        do {
            guard let conversation = try conversation(id, store) else {
                invocation.printError("termhost: assistant show: no conversation '\(VisibleText.of(id))'; 'termhost assistant history' lists them")
                return 1
            }
            let runs = try store.runs(of: conversation)
            let transcript = try store.transcript(conversation)
            if invocation.jsonOutput || parsed.has("--json") {
                invocation.print(HistoryView.encode(["conversation": conversation, "runs": runs.map(HistoryView.runObject),
                                                     "messages": transcript.map { HistoryView.messageObject($0.message, run: $0.run) }]))
            } else {
                HistoryView.showLines(runs: runs, transcript: transcript).forEach { invocation.print($0) }
            }
            return 0
        } catch {
            invocation.printError("termhost: assistant show: \(error)")
            return 1
        }
    }

    private func remove(_ store: RunStore, _ arguments: ArraySlice<String>) -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try invocation.parse(arguments, with: Self.rmArguments) } catch { return error.status }
        guard let id = parsed.arguments.first else {
            return invocation.reportUsageError(CommandUsageError(command: "termhost assistant rm", problem: "a conversation ID is required", usage: "usage: " + AssistantUsage.assistant))
        }
        do {
            guard let conversation = try conversation(id, store) else {
                invocation.printError("termhost: assistant rm: no conversation '\(VisibleText.of(id))'; 'termhost assistant history' lists them")
                return 1
            }
            try store.remove(conversation)
            invocation.print("removed conversation \(conversation)")
            return 0
        } catch {
            invocation.printError("termhost: assistant rm: \(error)")
            return 1
        }
    }

    /// Reads questions a line at a time until end of input; each is one run of the same
    /// conversation. Returns 0, or 130 when the host asked the command to stop.
    private func converse(_ store: RunStore) -> Int32 {
        let parsed: ParsedArguments
        do { parsed = try invocation.parse(with: Self.conversationArguments) } catch { return error.status }
        let setup: RunSetup
        do { setup = try RunSetup.resolve(parsed, host: host, invocation: invocation, command: "assistant") } catch { return error.status }
        let targetHost = parsed.value("--host")
        var conversation = parsed.value("--continue")
        if let id = conversation {
            guard (try? self.conversation(id, store)) != nil else {
                invocation.printError("termhost: assistant: no conversation '\(VisibleText.of(id))'; 'termhost assistant history' lists them")
                return 1
            }
            conversation = id.split(separator: ".").first.map(String.init)
        }
        let session = RunSession(host: host, invocation: invocation, store: store, provider: setup.provider,
                                 providerName: setup.providerName, mode: parsed.has("--acting") ? .acting : .planning,
                                 targetHost: targetHost, access: setup.access)
        let interactive = isatty(invocation.stdinFD) == 1
        var lines = LineReader(fd: invocation.stdinFD)
        while true {
            if interactive { invocation.print("> ", terminator: "") }
            guard let line = lines.next() else { break }
            let question = line.trimmingCharacters(in: .whitespaces)
            if question.isEmpty { continue }
            if conversation == nil {
                do { conversation = try store.newConversation(title: question, host: targetHost) } catch {
                    invocation.printError("termhost: assistant: cannot save the conversation: \(error)")
                    return 1
                }
            }
            let printer = AnswerPrinter(invocation: invocation, quiet: false, clock: setup.clock)
            let (_, end) = session.run(question, conversation: conversation!, printer: printer, watchKeys: interactive)
            switch end.state {
            case .failed: invocation.printError("termhost: assistant: \(VisibleText.of(end.reason ?? "the run failed"))")
            case .stopped: invocation.printError("[stopped]")
            default: break
            }
            if host.cancellation?.isCancelled(scene: invocation.scene) == true { return 130 }
        }
        if let conversation { invocation.printError("conversation \(conversation) saved; 'termhost assistant show \(conversation)' shows it") }
        return 0
    }
}

/// Lines from a file descriptor, read with read(2) so nothing is buffered past what the
/// conversation needs (approval prompts read the same terminal).
struct LineReader {
    let fd: Int32
    private var pending: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    mutating func next() -> String? {
        var byte: UInt8 = 0
        while true {
            if let newline = pending.firstIndex(of: 0x0a) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            let n = read(fd, &byte, 1)
            if n == 1 { pending.append(byte); continue }
            if n < 0 && errno == EINTR { continue }
            guard !pending.isEmpty else { return nil }
            defer { pending = [] }
            return String(decoding: pending, as: UTF8.self)
        }
    }
}
