import Dispatch
import Foundation
import Synchronization

/// One run: model, tool calls, policy, results, model again, until the model finishes, the
/// user stops it, something fails, or `stepLimit` model requests were made.
///
/// Design: every event is handed to `record` (the store) before the next step starts: the
/// user's message, each model turn with its tool calls (before any of them runs), and each
/// result. So a crash leaves a transcript whose unanswered calls are exactly the ones that may
/// or may not have run. Calls of one turn are decided by the gate one at a time in the model's
/// order (the gate may ask the person), then run: concurrently when every call of the turn is
/// parallel-safe, else one after another. Every call gets a result, in the model's order:
/// refused, failed, cancelled, or never started because the run was stopped.
public struct RunEngine {
    public enum Mode: String, Sendable, Equatable {
        /// Read-only tools only (and ssh_exec when `provesReadOnly` says so).
        case planning
        case acting
    }

    /// How the run ended; `state` is what is stored.
    public struct End: Sendable, Equatable {
        public var state: RunState
        /// For `.failed`: why, for the user (provider text is untrusted: make it visible).
        public var reason: String?

        public init(state: RunState, reason: String? = nil) {
            self.state = state
            self.reason = reason
        }
    }

    /// The answer text the model streams, as it arrives.
    public var onText: (String) -> Void = { _ in }
    /// A call about to run, and its outcome (for the terminal).
    public var onCallStart: (ToolCall) -> Void = { _ in }
    public var onCallEnd: (ToolCall, RunToolOutcome) -> Void = { _, _ in }
    /// A call refused by the run itself, before the gate saw it (no such tool, not offered in
    /// this mode, a planning run's state-changing call, the run stopped): for the audit log,
    /// which the gate writes for its own decisions.
    public var onRefusedByRun: (ToolCall, String) -> Void = { _, _ in }

    public let provider: any ModelProvider
    public let tools: [RunTool]
    public let runner: any RunToolRunner
    public let control: RunControl
    public let mode: Mode
    public var system: String
    /// Model requests per run; one more turn of tool calls is then refused by stopping.
    public var stepLimit = 50
    /// Tool calls one model turn may make, and one run in all (settings `maxCallsPerTurn` and
    /// `maxCallsPerRun` of org.termhost.assistant): a turn of 10,000 calls once all ran. The
    /// rest are refused with a reason the model sees, in one audit record and one stderr line.
    public var callsPerTurn = RunEngine.defaultCallsPerTurn
    public var callsPerRun = RunEngine.defaultCallsPerRun
    public static let defaultCallsPerTurn = 32
    public static let defaultCallsPerRun = 500
    public static let callsPerTurnRange = 1...1000
    public static let callsPerRunRange = 1...100_000
    /// The longest tool result the model sees (and the store keeps), in UTF-8 bytes.
    public var resultLimit = 64 * 1024
    /// Policy: run or refuse one call. Called on the engine's thread, in the model's order.
    public var decide: (ToolCall, RunTool) -> RunCallDecision = { _, _ in .run }
    /// For a planning run: whether a call of a tool that is not read-only is proven read-only
    /// (the command classifier, for ssh_exec).
    public var provesReadOnly: (ToolCall) -> Bool = { _ in false }
    /// Second layer against secrets in tool output, before the model or the store sees it.
    public var redact: (String) -> String = { $0 }
    /// Makes each call number unique in the process (termhost.tools/1 call IDs).
    public var nextCallNumber: () -> UInt64

    public init(provider: any ModelProvider, tools: [RunTool], runner: any RunToolRunner,
                control: RunControl, mode: Mode, system: String, nextCallNumber: @escaping () -> UInt64) {
        self.provider = provider
        self.tools = tools
        self.runner = runner
        self.control = control
        self.mode = mode
        self.system = system
        self.nextCallNumber = nextCallNumber
    }

    /// The tools this run offers the model: by mode, then planning keeps read-only ones and
    /// ssh_exec (whose calls must then be proven read-only one by one).
    public var offered: [RunTool] {
        tools.filter { tool in
            switch mode {
            case .acting: tool.acting
            case .planning: tool.planning && (tool.readOnly || tool.name == "ssh_exec")
            }
        }
    }

    /// Runs from `transcript` (which ends with the user's new message, already recorded).
    /// `record` persists one event and throws if it cannot: the run then fails, since going on
    /// would run tools the history does not show.
    public func run(_ transcript: inout [ChatMessage], record: (ChatMessage) throws -> Void) -> End {
        let offered = self.offered
        let specs = offered.map(\.spec)
        var callsSoFar = 0
        for _ in 0..<stepLimit {
            if control.isStopped { return End(state: .stopped) }
            var text = ""
            var calls: [ToolCall] = []
            do throws(ModelError) {
                try provider.stream(system: system, messages: transcript, tools: specs,
                                    isCancelled: { [control] in control.isStopped }) { event in
                    switch event {
                    case .textDelta(let piece):
                        text += piece
                        onText(piece)
                    case .toolCall(let call): calls.append(call)
                    case .finished: break
                    }
                }
            } catch {
                if error.kind == .cancelled || control.isStopped {
                    return keep(.assistant(text: text, toolCalls: []), in: &transcript, record: record, end: End(state: .stopped), unlessEmpty: text)
                }
                return keep(.assistant(text: text, toolCalls: []), in: &transcript, record: record,
                            end: End(state: .failed, reason: error.message), unlessEmpty: text)
            }
            let turn = ChatMessage.assistant(text: text, toolCalls: calls)
            do { try record(turn) } catch { return End(state: .failed, reason: "cannot save the run: \(error)") }
            transcript.append(turn)
            if calls.isEmpty { return End(state: .finished) }
            do {
                for result in try answer(calls, offered: offered, callsSoFar: &callsSoFar, record: record) {
                    transcript.append(result)
                }
            } catch {
                return End(state: .failed, reason: "cannot save the run: \(error)")
            }
        }
        return End(state: .failed, reason: "the model made \(stepLimit) requests without finishing (the step limit); ask again to go on")
    }

    private func keep(_ message: ChatMessage, in transcript: inout [ChatMessage], record: (ChatMessage) throws -> Void,
                      end: End, unlessEmpty text: String) -> End {
        guard !text.isEmpty else { return end }
        do { try record(message) } catch { return End(state: .failed, reason: "cannot save the run: \(error)") }
        transcript.append(message)
        return end
    }

    /// Decides, runs and records one turn's calls; returns their results in the model's order.
    private func answer(_ calls: [ToolCall], offered: [RunTool], callsSoFar: inout Int,
                        record: (ChatMessage) throws -> Void) throws -> [ChatMessage] {
        var pending: [(call: ToolCall, tool: RunTool)] = []
        var early: [String: RunToolOutcome] = [:]
        var capped: [ToolCall] = []
        var capReason = ""
        for (index, call) in calls.enumerated() {
            if index >= callsPerTurn || callsSoFar >= callsPerRun {
                capReason = index >= callsPerTurn
                    ? "refused: this turn asked for \(calls.count) tool calls and at most \(callsPerTurn) run per turn (setting maxCallsPerTurn of org.termhost.assistant); ask for fewer at a time"
                    : "refused: this run already made \(callsPerRun) tool calls, its limit (setting maxCallsPerRun of org.termhost.assistant); finish with what you have"
                early[call.id] = .error(capReason)
                capped.append(call)
                continue
            }
            callsSoFar += 1
            if let (refusal, byRun) = refusal(call, offered: offered) {
                // Shown where the run is watched like a call that ran, and audited.
                early[call.id] = .error(refusal)
                onCallStart(call)
                onCallEnd(call, .error(refusal))
                if byRun { onRefusedByRun(call, refusal) }
            } else if let tool = offered.first(where: { $0.name == call.name }) {
                pending.append((call, tool))
            }
        }
        if let first = capped.first {
            // One line and one audit record for all of them, however many the model asked for.
            let summary = capped.count == 1 ? capReason : capReason + " (\(capped.count) calls of this turn refused so)"
            onCallStart(first)
            onCallEnd(first, .error(summary))
            onRefusedByRun(first, summary)
        }
        let concurrent = pending.count > 1 && pending.allSatisfy(\.tool.parallelSafe)
        var results: [ChatMessage] = []
        var done = 0
        // Results go to the store in the model's order, each as soon as every earlier one is in.
        func flush(_ outcomes: [String: RunToolOutcome]) throws {
            while done < calls.count, let outcome = outcomes[calls[done].id] {
                let message = result(calls[done], outcome)
                try record(message)
                results.append(message)
                done += 1
            }
        }
        var outcomes = early
        if concurrent {
            try flush(outcomes)
            for (id, outcome) in runConcurrently(pending) { outcomes[id] = outcome }
        } else {
            for (call, tool) in pending {
                try flush(outcomes)
                outcomes[call.id] = runOne(call, tool)
            }
        }
        try flush(outcomes)
        return results
    }

    /// Why a call must not run, or nil: unknown or not offered tool, planning, stopped (`byRun`:
    /// the run's own refusal), or the gate's (audited by the gate).
    private func refusal(_ call: ToolCall, offered: [RunTool]) -> (String, byRun: Bool)? {
        guard let tool = offered.first(where: { $0.name == call.name }) else {
            if tools.contains(where: { $0.name == call.name }) {
                return ("refused: \(call.name) is not available in a \(mode.rawValue) run", true)
            }
            return ("refused: there is no tool named \(call.name)", true)
        }
        if mode == .planning, !tool.readOnly, !provesReadOnly(call) {
            return ("refused: this is a planning run, and this call could change state; run with --acting to allow it", true)
        }
        if control.isStopped { return (Self.notStarted, true) }
        if case .refuse(let message) = decide(call, tool) { return (message, false) }
        return nil
    }

    static let notStarted = "not run: the run was stopped before this call started"
    static let cancelledWhileRunning = "cancelled: the run was stopped while this call ran; it may have partly run"

    private func runOne(_ call: ToolCall, _ tool: RunTool) -> RunToolOutcome {
        let number = nextCallNumber()
        guard control.admit(number, runner: runner) else { return .error(Self.notStarted) }
        defer { control.release(number) }
        onCallStart(call)
        let outcome = runner.call(call, tool: tool, number: number)
        onCallEnd(call, outcome)
        return outcome
    }

    private func runConcurrently(_ pending: [(call: ToolCall, tool: RunTool)]) -> [String: RunToolOutcome] {
        let numbers = pending.map { _ in nextCallNumber() }
        let admitted = numbers.map { control.admit($0, runner: runner) }
        for (item, ok) in zip(pending, admitted) where ok { onCallStart(item.call) }
        let outcomes = Outcomes()
        let group = DispatchGroup()
        // A thread per call, not Dispatch's pool: tool calls block (on the network, for
        // minutes), and the pool adds threads for blocked work only slowly.
        for i in pending.indices {
            let call = pending[i].call, tool = pending[i].tool, number = numbers[i], ok = admitted[i]
            group.enter()
            Thread { [runner] in
                let outcome = ok ? runner.call(call, tool: tool, number: number) : .error(RunEngine.notStarted)
                outcomes.byID.withLock { $0[call.id] = outcome }
                group.leave()
            }.start()
        }
        group.wait()
        for (number, ok) in zip(numbers, admitted) where ok { control.release(number) }
        let all = outcomes.byID.withLock { $0 }
        for (item, ok) in zip(pending, admitted) where ok { onCallEnd(item.call, all[item.call.id]!) }
        return all
    }

    /// The outcomes of a concurrent batch, written from its threads.
    private final class Outcomes: Sendable {
        let byID = Mutex<[String: RunToolOutcome]>([:])
    }

    private func result(_ call: ToolCall, _ outcome: RunToolOutcome) -> ChatMessage {
        switch outcome {
        case .result(let json): .toolResult(callID: call.id, content: bounded(redact(json)), isError: false)
        case .error(let text): .toolResult(callID: call.id, content: bounded(redact(text)), isError: true)
        case .cancelled: .toolResult(callID: call.id, content: Self.cancelledWhileRunning, isError: true)
        }
    }

    /// Cut at `resultLimit` bytes on a character boundary, saying how much was left out.
    private func bounded(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.count > resultLimit else { return text }
        var end = utf8.index(utf8.startIndex, offsetBy: resultLimit)
        while end > utf8.startIndex, String.Index(end, within: text) == nil { end = utf8.index(before: end) }
        let kept = String(text[..<end])
        return kept + "\n[\(utf8.count - kept.utf8.count) more bytes not shown]"
    }
}
