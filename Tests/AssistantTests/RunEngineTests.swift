import AssistantCore
import Foundation
import Synchronization
import Testing
import TestSupport

/// The run engine's rules, with a model that replays turns (no HTTP: the provider is not what
/// these tests are about) and a runner that records how calls overlapped.
@Suite struct RunEngineTests {
    /// Replays one scripted turn per request and keeps every transcript it was sent.
    final class ScriptedModel: ModelProvider, @unchecked Sendable {
        let turns: [[ModelEvent]]
        let sent = Mutex<[[ChatMessage]]>([])
        init(_ turns: [[ModelEvent]]) { self.turns = turns }
        func stream(system: String, messages: [ChatMessage], tools: [ToolSpec], isCancelled: @Sendable () -> Bool,
                    onEvent: (ModelEvent) -> Void) throws(ModelError) {
            let index = sent.withLock { $0.append(messages); return $0.count - 1 }
            if isCancelled() { throw ModelError(.cancelled, "cancelled") }
            for event in turns[min(index, turns.count - 1)] { onEvent(event) }
        }
    }

    /// Runs each call until `release` says so; counts how many run at once.
    final class Recorder: RunToolRunner, @unchecked Sendable {
        let running = Mutex(0)
        let most = Mutex(0)
        let started = Mutex<[String]>([])
        let cancelled = Mutex<Set<UInt64>>([])
        let waitForPeers: Int
        init(waitForPeers: Int = 1) { self.waitForPeers = waitForPeers }
        func call(_ call: ToolCall, tool: RunTool, number: UInt64) -> RunToolOutcome {
            let now = running.withLock { $0 += 1; return $0 }
            most.withLock { $0 = max($0, now) }
            started.withLock { $0.append(call.id) }
            defer { running.withLock { $0 -= 1 } }
            // A parallel batch shows itself by every call being in flight at once.
            Wait.until(timeout: 5) { most.withLock { $0 } >= waitForPeers || cancelled.withLock { $0.contains(number) } }
            if call.name == "slow" {
                Wait.until(timeout: 120) { cancelled.withLock { $0.contains(number) } }
                return .cancelled
            }
            return .result("{\"call\":\"\(call.id)\"}")
        }
        func cancel(number: UInt64) { _ = cancelled.withLock { $0.insert(number) } }
    }

    static let tools = [
        RunTool(name: "get_metrics", description: "", inputSchemaJSON: "{}", readOnly: true, parallelSafe: true),
        RunTool(name: "ssh_exec", description: "", inputSchemaJSON: "{}", readOnly: false, parallelSafe: false),
        RunTool(name: "sftp_write", description: "", inputSchemaJSON: "{}", readOnly: false, parallelSafe: false),
        RunTool(name: "slow", description: "", inputSchemaJSON: "{}", readOnly: true, parallelSafe: false),
    ]

    static func call(_ id: String, _ name: String) -> ModelEvent { .toolCall(ToolCall(id: id, name: name, argumentsJSON: "{}")) }

    static let counter = Atomic<UInt64>(0)
    static func engine(_ model: ScriptedModel, _ runner: Recorder, mode: RunEngine.Mode = .acting, control: RunControl = RunControl()) -> RunEngine {
        RunEngine(provider: model, tools: tools, runner: runner, control: control, mode: mode, system: "s",
                  nextCallNumber: { counter.add(1, ordering: .relaxed).newValue })
    }

    static func results(_ transcript: [ChatMessage]) -> [(String, String, Bool)] {
        transcript.compactMap { if case .toolResult(let id, let text, let error) = $0 { (id, text, error) } else { nil } }
    }

    @Test func aBatchOfParallelSafeCallsRunsConcurrentlyAndResultsKeepTheModelsOrder() {
        let model = ScriptedModel([[Self.call("a", "get_metrics"), Self.call("b", "get_metrics"), Self.call("c", "get_metrics"), .finished(reason: "tool_calls")],
                                   [.textDelta("done"), .finished(reason: "stop")]])
        let runner = Recorder(waitForPeers: 3)
        var transcript: [ChatMessage] = [.user("q")]
        var recorded: [ChatMessage] = []
        let end = Self.engine(model, runner).run(&transcript) { recorded.append($0) }
        #expect(end == RunEngine.End(state: .finished))
        #expect(runner.most.withLock { $0 } == 3)
        #expect(Self.results(recorded).map(\.0) == ["a", "b", "c"])
        #expect(transcript.unansweredToolCalls.isEmpty)
    }

    @Test func aMixedBatchRunsOneCallAtATimeInOrder() {
        let model = ScriptedModel([[Self.call("a", "get_metrics"), Self.call("b", "ssh_exec"), Self.call("c", "get_metrics"), .finished(reason: "tool_calls")],
                                   [.finished(reason: "stop")]])
        let runner = Recorder()
        var transcript: [ChatMessage] = [.user("q")]
        var recorded: [ChatMessage] = []
        _ = Self.engine(model, runner).run(&transcript) { recorded.append($0) }
        #expect(runner.most.withLock { $0 } == 1)
        #expect(runner.started.withLock { $0 } == ["a", "b", "c"])
        #expect(Self.results(recorded).map(\.0) == ["a", "b", "c"])
    }

    @Test func theTurnIsRecordedBeforeAnyOfItsCallsRuns() {
        let model = ScriptedModel([[Self.call("a", "get_metrics"), .finished(reason: "tool_calls")], [.finished(reason: "stop")]])
        let runner = Recorder()
        var transcript: [ChatMessage] = [.user("q")]
        var startedWhenRecorded: [Int] = []
        _ = Self.engine(model, runner).run(&transcript) { _ in startedWhenRecorded.append(runner.started.withLock { $0.count }) }
        #expect(startedWhenRecorded == [0, 1, 1])
    }

    @Test func aRefusedCallIsAnsweredAndTheOthersStillRun() {
        let model = ScriptedModel([[Self.call("a", "sftp_write"), Self.call("b", "get_metrics"), .finished(reason: "tool_calls")], [.finished(reason: "stop")]])
        let runner = Recorder()
        var engine = Self.engine(model, runner)
        engine.decide = { call, _ in call.name == "sftp_write" ? .refuse("refused: policy says Deny for sftp_write") : .run }
        var transcript: [ChatMessage] = [.user("q")]
        _ = engine.run(&transcript) { _ in }
        let results = Self.results(transcript)
        #expect(results.map(\.0) == ["a", "b"])
        #expect(results[0].1 == "refused: policy says Deny for sftp_write" && results[0].2)
        #expect(runner.started.withLock { $0 } == ["b"])
        // The model saw the refusal before its next turn.
        #expect(model.sent.withLock { $0 }.last.map(Self.results)?.first?.1 == "refused: policy says Deny for sftp_write")
    }

    @Test func planningRefusesStateChangingCallsUnlessProvenReadOnly() {
        let model = ScriptedModel([[Self.call("a", "ssh_exec"), Self.call("b", "ssh_exec"), Self.call("c", "sftp_write"), .finished(reason: "tool_calls")],
                                   [.finished(reason: "stop")]])
        let runner = Recorder()
        var engine = Self.engine(model, runner, mode: .planning)
        engine.provesReadOnly = { $0.id == "b" }
        #expect(engine.offered.map(\.name) == ["get_metrics", "ssh_exec", "slow"])
        var transcript: [ChatMessage] = [.user("q")]
        _ = engine.run(&transcript) { _ in }
        let results = Self.results(transcript)
        #expect(results[0].1 == "refused: this is a planning run, and this call could change state; run with --acting to allow it")
        #expect(results[1].1 == "{\"call\":\"b\"}")
        #expect(results[2].1 == "refused: sftp_write is not available in a planning run")
    }

    @Test func stoppingDuringACallCancelsItAndAnswersEveryCall() {
        let model = ScriptedModel([[Self.call("a", "slow"), Self.call("b", "get_metrics"), .finished(reason: "tool_calls")], [.finished(reason: "stop")]])
        let runner = Recorder()
        let control = RunControl()
        var transcript: [ChatMessage] = [.user("q")]
        let stopper = Thread {
            Wait.until(timeout: 10) { runner.running.withLock { $0 } == 1 }
            control.stop()
        }
        stopper.start()
        let end = Self.engine(model, runner, control: control).run(&transcript) { _ in }
        #expect(end.state == .stopped)
        let results = Self.results(transcript)
        #expect(results.map(\.1) == ["cancelled: the run was stopped while this call ran; it may have partly run",
                                     "not run: the run was stopped before this call started"])
        #expect(transcript.unansweredToolCalls.isEmpty)
        #expect(model.sent.withLock { $0.count } == 1)
    }

    @Test func theStepLimitEndsARunThatNeverFinishes() {
        let model = ScriptedModel([[Self.call("a", "get_metrics"), .finished(reason: "tool_calls")]])
        var engine = Self.engine(model, Recorder())
        engine.stepLimit = 3
        var transcript: [ChatMessage] = [.user("q")]
        let end = engine.run(&transcript) { _ in }
        #expect(end.state == .failed)
        #expect(end.reason == "the model made 3 requests without finishing (the step limit); ask again to go on")
        #expect(model.sent.withLock { $0.count } == 3)
    }

    @Test func longResultsAreCutWithATruthfulNote() {
        final class Big: RunToolRunner {
            func call(_ call: ToolCall, tool: RunTool, number: UInt64) -> RunToolOutcome { .result(String(repeating: "é", count: 100)) }
            func cancel(number: UInt64) {}
        }
        let model = ScriptedModel([[Self.call("a", "get_metrics"), .finished(reason: "tool_calls")], [.finished(reason: "stop")]])
        var engine = RunEngine(provider: model, tools: Self.tools, runner: Big(), control: RunControl(), mode: .acting, system: "",
                               nextCallNumber: { 1 })
        engine.resultLimit = 51
        var transcript: [ChatMessage] = [.user("q")]
        _ = engine.run(&transcript) { _ in }
        #expect(Self.results(transcript).first?.1 == String(repeating: "é", count: 25) + "\n[150 more bytes not shown]")
    }

    @Test func exitStatusesOfRunStates() {
        #expect(RunState.allCases.map(\.exitStatus) == [1, 0, 130, 1, 1])
    }
}
