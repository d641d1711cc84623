import AssistantCore
import Foundation
import TermhostSDK

/// `termhost mcp`'s protocol side: the Model Context Protocol over JSON-RPC 2.0, one message a
/// line (`JSONRPCLines`, `JSONRPCMessage`), offering the host's tool catalog under the
/// Assistant's policy gate.
///
/// Design: the read loop (`MCPCommand`) hands every line to `handle`, on its one thread.
/// initialize, ping and tools/list are answered there. A tools/call gets a thread of its own
/// (`MCPToolCall`), at most `maxCallsInFlight` at once; up to `maxCallsQueued` more wait for one
/// in arrival order. Each:
///
/// 1. asks the gate (`ToolGate`): Deny refuses, Approve runs, an Ask goes to the person through
///    MCP elicitation when the client declared it (else it is refused with the setting that
///    allows it). Decisions are taken one at a time, so two approval forms never overlap;
/// 2. waits for its turn: a parallel-safe tool runs beside other parallel-safe calls, any other
///    tool runs alone;
/// 3. runs through termhost.tools/1, sending notifications/progress while it runs when the
///    client gave a progress token, and answers with the redacted result.
///
/// notifications/cancelled ends the call it names wherever it is (waiting for a decision, for
/// its turn, or running: the cancel is forwarded to termhost.tools/1) and no answer is sent,
/// as the specification asks. The end of input or SIGTERM cancels every call the same way and
/// waits for them (`shutdown`), within the host's 3 s bound.
///
/// Threading: `handle` on the read loop's thread; everything else [any-thread]. The state below
/// is guarded by `lock`; every change is broadcast, and every wait rechecks its condition.
final class MCPServer: @unchecked Sendable {
    /// Newest first; an unknown version from the client gets the newest.
    static let protocolVersions = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
    /// The first version with elicitation.
    static let elicitationSince = "2025-06-18"
    static let maxCallsInFlight = 16
    /// Calls accepted at once, running or waiting for one of the `maxCallsInFlight` threads in
    /// arrival order; one more is refused until one ends.
    static let maxCallsQueued = 256
    /// Bytes of arguments the accepted calls may hold together: 256 calls of 4 MiB lines would
    /// hold 1 GiB; a call beyond this is refused until others end.
    static let maxArgumentBytesHeld = 64 << 20
    static let maxLineBytes = 4 << 20

    let output: MCPOutput
    let tools: ToolService?
    let catalog: [RunTool]
    let gate: Result<ToolGate, AssistantPolicyError>
    let mode: RunMode
    /// The audit log's run field for this session's decisions.
    let runID: String
    let version: String
    let log: @Sendable (String) -> Void
    let redactor = Redactor()

    struct CallState {
        var cancelled = false
        /// Cancelled by notifications/cancelled: no answer is sent.
        var byClient = false
        /// The termhost.tools/1 call number once it runs.
        var number: UInt64?
        /// Its answer is written (by its thread, or by the end of the session for it).
        var answered = false
        /// The bytes of its arguments, counted against `maxArgumentBytesHeld` while it is held.
        var argumentBytes = 0
    }

    enum Reply {
        case pending
        case answered(result: Any?, error: JSONRPCError?)
    }

    let lock = NSCondition()
    var clientElicits = false
    var calls: [JSONRPCID: CallState] = [:]
    /// The sum of `calls`' argument bytes.
    var argumentBytesHeld = 0
    /// This side's requests (elicitation/create) waiting for the client's answer.
    var replies: [JSONRPCID: Reply] = [:]
    var nextRequest = 0
    var sharedRunning = 0
    var exclusiveRunning = false
    var deciding = false
    var closing = false
    /// Call threads alive (at most `maxCallsInFlight`), and the calls waiting for one.
    var callThreads = 0
    var waiting: [@Sendable () -> Void] = []

    init(output: MCPOutput, tools: ToolService?, catalog: [RunTool], gate: Result<ToolGate, AssistantPolicyError>,
         mode: RunMode, runID: String, version: String, log: @escaping @Sendable (String) -> Void) {
        self.output = output
        self.tools = tools
        self.catalog = catalog
        self.gate = gate
        self.mode = mode
        self.runID = runID
        self.version = version
        self.log = log
    }

    /// The tools this session offers: those its mode may use. A planning session offers
    /// read-only tools, and ssh_exec for the commands the classifier proves read-only.
    var offered: [RunTool] {
        catalog.filter { mode == .planning ? $0.planning && ($0.readOnly || $0.name == GateCall.execTool) : $0.acting }
    }

    func handle(_ item: JSONRPCLines.Item) {
        switch item {
        case .oversized(let bytes):
            log("termhost mcp: a message of \(bytes) bytes refused (at most \(Self.maxLineBytes) per line)")
            output.send(JSONRPCMessage.error(nil, JSONRPCError(.invalidRequest,
                "the message is \(bytes) bytes, more than the \(Self.maxLineBytes) one line may have")))
        case .line(let bytes):
            switch JSONRPCMessage.parse(bytes) {
            case .failure(let error):
                output.send(JSONRPCMessage.error(error.id, error))
            case .success(.request(let id, let method, let params)):
                request(id, method, params)
            case .success(.notification(let method, let params)):
                notification(method, params)
            case .success(.response(let id, let result, let error)):
                lock.withLock {
                    guard case .pending? = replies[id] else { return }
                    replies[id] = .answered(result: result, error: error)
                    lock.broadcast()
                }
            }
        }
    }

    private func request(_ id: JSONRPCID, _ method: String, _ params: [String: Any]) {
        switch method {
        case "initialize":
            output.send(JSONRPCMessage.result(id, initialize(params)))
        case "ping":
            output.send(JSONRPCMessage.result(id, [:]))
        case "tools/list":
            let policy = try? gate.get().policy
            output.send(JSONRPCMessage.result(id, ["tools": MCPCatalog.entries(offered, policy: policy)]))
        case "tools/call":
            startCall(id, params)
        default:
            output.send(JSONRPCMessage.error(id, JSONRPCError(.methodNotFound, "method '\(method)' is not supported by termhost mcp")))
        }
    }

    private func notification(_ method: String, _ params: [String: Any]) {
        guard method == "notifications/cancelled", let id = JSONRPCID(jsonValue: params["requestId"]) else { return }
        cancel(id, byClient: true)
    }

    /// The version both sides speak, the server's capabilities and who it is. Elicitation is
    /// used only when the client declared it and the version has it.
    private func initialize(_ params: [String: Any]) -> [String: Any] {
        let asked = params["protocolVersion"] as? String ?? ""
        let version = Self.protocolVersions.contains(asked) ? asked : Self.protocolVersions[0]
        let capabilities = params["capabilities"] as? [String: Any] ?? [:]
        let elicits = capabilities["elicitation"] is [String: Any] && version >= Self.elicitationSince
        lock.withLock { clientElicits = elicits }
        return [
            "protocolVersion": version,
            "capabilities": ["tools": ["listChanged": false]],
            "serverInfo": ["name": "termhost", "title": "Termhost", "version": self.version],
            "instructions": "Tools that run on the user's saved SSH hosts (list_hosts names them), under the user's "
                + "termhost policy: a refused call says why and which setting would allow it. Credentials and "
                + "host-key decisions never go through a tool; an error says what the user should run instead.",
        ]
    }

    /// Cancels call `id` wherever it is. `byClient`: no answer will be sent for it.
    func cancel(_ id: JSONRPCID, byClient: Bool) {
        let number: UInt64? = lock.withLock {
            guard var call = calls[id], !call.cancelled else { return nil }
            call.cancelled = true
            call.byClient = byClient
            calls[id] = call
            lock.broadcast()
            return call.number
        }
        if let number { tools?.cancel(number: number) }
    }

    /// The end of input or SIGTERM: no call starts, every call is cancelled, and this waits
    /// for them to end, at most `seconds`. A call still running then (a tool slow to honour its
    /// cancel: the SSH plugin waits up to 2 s for the server to confirm a channel's close) is
    /// answered from here, since the process may exit before its thread gets to it: the
    /// client always gets one answer for every call it did not cancel itself.
    func shutdown(waitingAtMost seconds: Double) {
        let ids = lock.withLock { () -> [JSONRPCID] in
            closing = true
            lock.broadcast()
            return Array(calls.keys)
        }
        for id in ids { cancel(id, byClient: false) }
        let deadline = Date().addingTimeInterval(seconds)
        lock.withLock {
            while !calls.isEmpty && lock.wait(until: deadline) {}
            guard !calls.isEmpty else { return }
            log("termhost mcp: \(calls.count) tool call(s) did not end within \(seconds) s of the end; answered as cancelled")
            for (id, call) in calls {
                answerLocked(id, call.number == nil ? Self.endedBeforeItRan : Self.endedWhileItRan, isError: true)
            }
        }
    }
}
