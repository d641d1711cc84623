import AssistantCore
import Foundation
import Synchronization
import TermhostSDK

/// One tools/call, from the request to its answer: the gate, its turn, the tool, the result.
/// See `MCPServer` for the order and the rules.
extension MCPServer {
    func startCall(_ id: JSONRPCID, _ params: [String: Any]) {
        guard let name = params["name"] as? String else {
            return output.send(JSONRPCMessage.error(id, JSONRPCError(.invalidParams, "tools/call needs the tool's \"name\"")))
        }
        guard let tool = offered.first(where: { $0.name == name }) else {
            return output.send(JSONRPCMessage.error(id, JSONRPCError(.invalidParams, "unknown tool '\(name)'; tools/list names the tools")))
        }
        let arguments: String
        switch params["arguments"] {
        case nil: arguments = "{}"
        case let object as [String: Any]:
            guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
                return output.send(JSONRPCMessage.error(id, JSONRPCError(.invalidParams, "the arguments cannot be encoded")))
            }
            arguments = String(decoding: data, as: UTF8.self)
        default:
            return output.send(JSONRPCMessage.error(id, JSONRPCError(.invalidParams, "\"arguments\" must be an object")))
        }
        let progress = JSONRPCID(jsonValue: (params["_meta"] as? [String: Any])?["progressToken"])
        let refusal: JSONRPCError? = lock.withLock {
            if closing { return JSONRPCError(.internalError, "termhost mcp is shutting down") }
            if calls[id] != nil { return JSONRPCError(.invalidRequest, "a call with this request ID is still running") }
            if calls.count >= Self.maxCallsQueued {
                return JSONRPCError(.internalError, "\(Self.maxCallsQueued) tool calls are already running or waiting; "
                    + "wait for one to finish")
            }
            if argumentBytesHeld + arguments.utf8.count > Self.maxArgumentBytesHeld {
                return JSONRPCError(.internalError, "the tool calls running or waiting already hold \(argumentBytesHeld) bytes of arguments "
                    + "(at most \(Self.maxArgumentBytesHeld)); wait for one to finish")
            }
            var state = CallState()
            state.argumentBytes = arguments.utf8.count
            argumentBytesHeld += state.argumentBytes
            calls[id] = state
            return nil
        }
        if let refusal { return output.send(JSONRPCMessage.error(id, refusal)) }
        let work: @Sendable () -> Void = { [self] in run(id, tool, arguments, progress: progress) }
        let startThread: Bool = lock.withLock {
            guard callThreads < Self.maxCallsInFlight else {
                waiting.append(work)
                return false
            }
            callThreads += 1
            return true
        }
        guard startThread else { return }
        // Each thread takes the waiting calls, oldest first, once its own is answered.
        let thread = Thread { [self] in
            var job: (@Sendable () -> Void)? = work
            while let current = job {
                current()
                job = lock.withLock {
                    guard !waiting.isEmpty else {
                        callThreads -= 1
                        return nil
                    }
                    return waiting.removeFirst()
                }
            }
        }
        thread.name = "termhost-mcp-call"
        thread.start()
    }

    private func run(_ id: JSONRPCID, _ tool: RunTool, _ arguments: String, progress: JSONRPCID?) {
        let answer: (text: String, isError: Bool)?
        if case .refuse(let message) = decide(id, tool, arguments) {
            answer = isCancelled(id) ? nil : (message, true)
        } else if let number = admit(id, tool) {
            let ticker = progress.map { ProgressTicker(output: output, token: $0, tool: tool.name) }
            let outcome = tools?.call(ToolCall(id: "mcp-\(number)", name: tool.name, argumentsJSON: arguments),
                                      tool: tool, number: number) ?? .error("this host offers no tools")
            ticker?.stop()
            release(tool)
            switch outcome {
            case .result(let json): answer = (redactor.redact(json), false)
            case .error(let message): answer = (redactor.redact(message), true)
            case .cancelled: answer = (Self.endedWhileItRan, true)
            }
        } else {
            answer = nil
        }
        let (text, isError) = answer ?? (Self.endedBeforeItRan, true)
        // Answered, unless the end of the session answered for it already, before the call
        // leaves `calls`, which the end of the session waits for.
        lock.withLock {
            answerLocked(id, text, isError: isError)
            argumentBytesHeld -= calls.removeValue(forKey: id)?.argumentBytes ?? 0
            lock.broadcast()
        }
    }

    static let endedBeforeItRan = "cancelled before it ran: termhost mcp is ending"
    static let endedWhileItRan = "cancelled while it ran: it may have partly run"

    /// Sends call `id`'s one answer, unless it has one or the client cancelled it (no answer,
    /// as the specification asks). The caller holds `lock`: whoever claims the answer also
    /// writes it before releasing the lock, so the end of the session never returns between a
    /// claim and its write.
    func answerLocked(_ id: JSONRPCID, _ text: String, isError: Bool) {
        guard let call = calls[id], !call.byClient, !call.answered else { return }
        calls[id]?.answered = true
        output.send(JSONRPCMessage.result(id, ["content": [["type": "text", "text": text]], "isError": isError]))
    }

    private func isCancelled(_ id: JSONRPCID) -> Bool { lock.withLock { calls[id]?.cancelled ?? true } }

    /// The gate's decision, one call at a time (an Ask may wait for a person).
    private func decide(_ id: JSONRPCID, _ tool: RunTool, _ arguments: String) -> RunCallDecision {
        let elicits: Bool? = lock.withLock {
            while deciding && !(calls[id]?.cancelled ?? true) { lock.wait() }
            guard !(calls[id]?.cancelled ?? true) else { return nil }
            deciding = true
            return clientElicits
        }
        guard let elicits else { return .refuse("cancelled before it was decided") }
        defer { lock.withLock { deciding = false; lock.broadcast() } }
        let gate: ToolGate
        switch self.gate {
        case .success(let g): gate = g
        case .failure(let problem):
            return .refuse("refused: the assistant's policy is unusable (\(problem.message)); nothing runs until it is fixed")
        }
        var modes = Set<RunMode>()
        if tool.planning { modes.insert(.planning) }
        if tool.acting { modes.insert(.acting) }
        var call = GateCall(runID: runID, toolName: tool.name, toolReadOnly: tool.readOnly, modes: modes, argumentsJSON: arguments)
        if gate.policy.needsTags(tool.name) { call.hostTags = HostTags.of(call.host, tools: tools?.tools, scene: tools?.scene ?? 0) }
        let person: (any ApprovalPrompter)? = elicits ? MCPElicitation(server: self, call: id) : nil
        switch gate.decide(call, run: GateRun(mode: mode), prompter: person, reviewer: nil) {
        case .run: return .run
        case .refuse(let message, _): return .refuse(message)
        }
    }

    /// Waits for the call's turn (parallel-safe calls share, others run alone); its call
    /// number, or nil when it was cancelled first.
    private func admit(_ id: JSONRPCID, _ tool: RunTool) -> UInt64? {
        lock.withLock {
            while !(calls[id]?.cancelled ?? true) && (exclusiveRunning || (!tool.parallelSafe && sharedRunning > 0)) {
                lock.wait()
            }
            guard !(calls[id]?.cancelled ?? true) else { return nil }
            if tool.parallelSafe { sharedRunning += 1 } else { exclusiveRunning = true }
            let number = HostTools.nextCallID()
            calls[id]?.number = number
            return number
        }
    }

    private func release(_ tool: RunTool) {
        lock.withLock {
            if tool.parallelSafe { sharedRunning -= 1 } else { exclusiveRunning = false }
            lock.broadcast()
        }
    }
}

/// notifications/progress for one running call: before it starts, then every second, the
/// seconds it has run (the tools report no finer progress), until `stop`. The timer's handler runs on a
/// queue of its own, and `stop` cancels it there, so no progress follows the call's answer.
final class ProgressTicker {
    private let queue = DispatchQueue(label: "termhost.mcp.progress")
    private let timer: DispatchSourceTimer

    init(output: MCPOutput, token: JSONRPCID, tool: String) {
        func send(_ progress: Int, _ message: String) {
            output.send(JSONRPCMessage.notification("notifications/progress",
                                                    ["progressToken": token.jsonValue, "progress": progress, "message": message]))
        }
        // The first one before the call starts, so even a quick call has one.
        send(0, "\(tool) started")
        timer = DispatchSource.makeTimerSource(queue: queue)
        // Counted, not measured: progress must grow with every notification.
        let ticks = Mutex(0)
        timer.setEventHandler {
            let seconds = ticks.withLock { n in n += 1; return n }
            send(seconds, "\(tool) running for \(seconds) s")
        }
        timer.schedule(deadline: .now() + 1, repeating: 1.0)
        timer.resume()
    }

    func stop() { queue.sync { timer.cancel() } }
}
