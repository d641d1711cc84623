import CTermhost
import Foundation
import Synchronization
import TermhostLifecycle
import TermhostRegistry
import TermhostSDK

/// The host's side of `termhost.tools/1` (SDK/include/termhost/services/tools.h): the catalog of
/// the enabled features' tools, and calls routed to the instance that offers each.
///
/// Design: the catalog comes from the resolution, that is from manifests, so listing it runs no
/// plugin code. A call goes through four gates before any plugin code runs: the tool is in the
/// catalog (refused tools never are), the arguments are JSON, they match the tool's schema
/// (`ToolSchema.mismatch`, naming the argument), and the scene was not cancelled already. Then
/// the process-scope instance's provider (get_service(TERMHOST_TOOL_PROVIDER)) runs it, inside
/// the crash recorder's bracket (`tool_call("name")`, quarantined on the next start like a
/// command) and recorded as a call in progress, so shutdown never destroys the instance under
/// it. A result is checked to be JSON and cut at TERMHOST_TOOL_RESULT_LIMIT with a note that says
/// how much was left out.
///
/// Threading: [any-thread]; calls may run concurrently (the consumer decides, by parallel_safe).
public final class ToolService: Sendable {
    /// Why a call did not produce a result: a termhost_status and the message for the caller.
    public struct Failure: Error, Equatable, Sendable {
        public let code: Int32
        public let message: String
    }

    private struct Running: @unchecked Sendable {
        let provider: UnsafePointer<termhost_tool_provider_t>
        let crashSlot: Int32
    }

    private let resolution: Resolution
    private let lifecycle: LifecycleManager
    private let cancellation: CommandCancellation
    private let running = Mutex<[UInt64: Running]>([:])
    private let lastCallID = Atomic<UInt64>(0)
    /// Runs a call that names a typed action's tool (ActionTools); nil for any other tool.
    private let actionCall: @Sendable (String, String) -> Result<String, Failure>?

    init(resolution: Resolution, lifecycle: LifecycleManager, cancellation: CommandCancellation,
         actionCall: @escaping @Sendable (String, String) -> Result<String, Failure>? = { _, _ in nil }) {
        self.resolution = resolution
        self.lifecycle = lifecycle
        self.cancellation = cancellation
        self.actionCall = actionCall
    }

    /// The catalog as tools.h describes it: a JSON array sorted by name.
    public var catalogJSON: String { ToolService.catalogJSON(resolution) }

    /// The catalog of a resolution (also without a running host: `termhost tools`), typed
    /// actions included as tools (ActionTools).
    public static func catalogJSON(_ resolution: Resolution) -> String {
        let q = JSONText.quoted
        let items = resolution.tools.map { t, feature in
            (t.name, "{\"name\":\(q(t.name)),\"description\":\(q(t.description)),\"input_schema\":\(t.inputSchema),"
                + "\"read_only\":\(t.readOnly),\"parallel_safe\":\(t.parallelSafe),"
                + "\"modes\":[\(t.modes.map { q($0.rawValue) }.joined(separator: ","))],\"feature\":\(q(feature.rawValue))}")
        } + DeclaredAction.tools(resolution).map { ($0.toolName, $0.toolJSON) }
        return "[" + items.sorted { $0.0 < $1.0 }.map(\.1).joined(separator: ",") + "]"
    }

    /// A call ID no other call of this process has (tools.h: "unique in the process").
    public func nextCallID() -> UInt64 {
        lastCallID.add(1, ordering: .relaxed).newValue | (1 << 63)
    }

    /// Checks and runs one call; the result is JSON text of at most TERMHOST_TOOL_RESULT_LIMIT
    /// bytes (plus the note's few). Policy is the caller's job.
    public func call(tool name: String, argumentsJSON: String, callID: UInt64, scene: UInt64) -> Result<String, Failure> {
        func fail(_ code: Int32, _ message: String) -> Result<String, Failure> { .failure(Failure(code: code, message: message)) }
        let shown = VisibleText.of(name)
        if resolution.toolOwners[name] == nil, let routed = actionCall(name, argumentsJSON) { return routed }
        guard let owner = resolution.toolOwners[name], let feature = resolution.feature(owner),
              let tool = feature.descriptor.tools.first(where: { $0.name == name }) else {
            let refused = resolution.problems.first {
                if case .toolRefused(name, _, _) = $0 { true } else if case .duplicateTool(name, _, _) = $0 { true } else { false }
            }
            return fail(Int32(TERMHOST_ERR_NOT_FOUND), refused.map { "no tool '\(shown)': \($0)" } ?? "no enabled feature offers tool '\(shown)'")
        }
        guard let arguments = try? JSONDecoder().decode(JSONValue.self, from: Data(argumentsJSON.utf8)) else {
            return fail(Int32(TERMHOST_ERR_INVALID_ARGUMENT), "tool '\(name)': the arguments are not JSON: \(VisibleText.of(String(argumentsJSON.prefix(80))))")
        }
        if let mismatch = ToolSchema.mismatch(arguments, against: tool.inputSchema) {
            return fail(Int32(TERMHOST_ERR_INVALID_ARGUMENT), "tool '\(name)': \(mismatch)")
        }
        // The provider gets the value that was checked, written again (compact, keys sorted):
        // the caller's text could say a key twice, and a provider whose parser keeps the other
        // occurrence would run with an argument the schema never saw.
        let checkedArguments = arguments.description
        guard let instance = lifecycle.instance(owner) as? PluginFeature else {
            let reason = lifecycle.failures[owner] ?? "it has no live instance"
            return fail(Int32(TERMHOST_ERR_UNSUPPORTED), "tool '\(name)': feature '\(owner)' is not running: \(reason)")
        }
        guard let raw = instance.service(TERMHOST_TOOL_PROVIDER) else {
            return fail(Int32(TERMHOST_ERR_UNSUPPORTED),
                        "tool '\(name)': feature '\(owner)' declares it but returns no \(TERMHOST_TOOL_PROVIDER) table from get_service()")
        }
        let provider = raw.assumingMemoryBound(to: termhost_tool_provider_t.self)
        if let problem = TermhostStruct.problem("termhost_tool_provider_t", structSize: provider.pointee.struct_size,
                                                fields: ToolService.providerFields) {
            return fail(Int32(TERMHOST_ERR_UNSUPPORTED), "tool '\(name)': feature '\(owner)': \(problem)")
        }
        guard let callFunction = provider.pointee.call else {
            return fail(Int32(TERMHOST_ERR_UNSUPPORTED), "tool '\(name)': feature '\(owner)''s tool provider has no call()")
        }

        // cancel() names a call by its ID, so two running calls may not share one.
        let taken = running.withLock { calls in
            if calls[callID] != nil { return true }
            calls[callID] = Running(provider: provider, crashSlot: instance.crashSlot)
            return false
        }
        if taken { return fail(Int32(TERMHOST_ERR_INVALID_ARGUMENT), "tool '\(name)': call_id \(callID) belongs to a call still running") }
        defer { _ = running.withLock { $0.removeValue(forKey: callID) } }
        // The scene's Ctrl-C reaches the call through the provider's cancel(); a scene already
        // cancelled runs the handler at once, and the call is not started.
        let cancelled = Atomic<Bool>(false)
        let token = scene == 0 ? nil : cancellation.onCancel(scene: scene) { [weak self] _ in
            cancelled.store(true, ordering: .relaxed)
            self?.cancel(callID: callID)
        }
        defer { if let token { cancellation.remove(token) } }
        if cancelled.load(ordering: .relaxed) {
            return fail(Int32(TERMHOST_ERR_CANCELLED), "tool '\(name)': cancelled before it started")
        }

        let progress = lifecycle.calls.enter(instance, feature: owner, source: feature.descriptor.source, command: "tool \(name)")
        defer { lifecycle.calls.leave(progress) }
        let sink = ResultSink()
        var err = termhost_error_t()
        let rc: termhost_status = name.withCString { cName in
            checkedArguments.withCString { cArguments in
                var request = termhost_tool_call_t(
                    struct_size: UInt32(MemoryLayout<termhost_tool_call_t>.size), tool: cName, arguments_json: cArguments,
                    call_id: callID, scene: scene, write_result: ResultSink.write,
                    sink_user: Unmanaged.passUnretained(sink).toOpaque())
                return CallTracker.inside(instance.crashSlot, "tool_call", cArgument: cName) { callFunction(provider, &request, &err) }
            }
        }
        withExtendedLifetime(sink) {}
        guard rc == termhost_status(TERMHOST_OK) else {
            let message = termhostErrorMessage(err)
            return fail(rc, message.isEmpty ? "tool '\(name)' failed with code \(rc) and no message" : VisibleText.of(message))
        }
        return sink.result(tool: name)
    }

    /// Forwards cancel() to the provider running `callID`; unknown or finished IDs are ignored.
    public func cancel(callID: UInt64) {
        guard let r = running.withLock({ $0[callID] }), let cancel = TermhostStruct.member(r.provider, \.cancel) else { return }
        CallTracker.inside(r.crashSlot, "tool_cancel", cArgument: nil) { cancel(r.provider, callID) }
    }

    static let providerFields: [TermhostStruct.Field<termhost_tool_provider_t>] = [
        .init("struct_size", \.struct_size), .init("context", \.context), .init("call", \.call), .init("cancel", \.cancel),
    ]
}

/// Receives a provider's result: copies at most TERMHOST_TOOL_RESULT_LIMIT bytes of the first
/// write and counts the rest (tools.h: "call it at most once"; later writes are ignored).
final class ResultSink: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: [UInt8]?
    private var total = 0

    static let write: termhost_tool_result_sink = { user, json, size in
        guard let user else { return }
        Unmanaged<ResultSink>.fromOpaque(user).takeUnretainedValue().take(json, size)
    }

    private func take(_ json: UnsafePointer<CChar>?, _ size: Int) {
        lock.lock()
        defer { lock.unlock() }
        guard bytes == nil else { return }
        // size_t arrives as Int: a huge one is negative, and is read as nothing.
        let count = json == nil ? 0 : max(0, size)
        let kept = min(count, Int(TERMHOST_TOOL_RESULT_LIMIT))
        bytes = kept == 0 ? [] : Array(UnsafeRawBufferPointer(start: json, count: kept))
        total = count
    }

    func result(tool: String) -> Result<String, ToolService.Failure> {
        lock.lock()
        defer { lock.unlock() }
        guard let bytes, !bytes.isEmpty else {
            return .failure(.init(code: Int32(TERMHOST_ERR_INTERNAL), message: "tool '\(tool)' returned OK without a result"))
        }
        if total > bytes.count {
            // Cut JSON is not JSON: the kept part goes back as a string, with the truth about it.
            var kept = bytes
            while let last = kept.last, last & 0xC0 == 0x80 { kept.removeLast() }
            if let last = kept.last, last >= 0xC0 { kept.removeLast() }
            let text = String(decoding: kept, as: UTF8.self)
            return .success("{\"truncated\":true,\"note\":\"the result was \(total) bytes, more than the \(TERMHOST_TOOL_RESULT_LIMIT) the host accepts; "
                            + "\(total - kept.count) more bytes were left out\",\"partial_result\":\(ResultSink.escapingTerminalControls(JSONText.quoted(text)))}")
        }
        guard (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil,
              let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(.init(code: Int32(TERMHOST_ERR_INTERNAL), message: "tool '\(tool)' returned a result that is not JSON"))
        }
        return .success(ResultSink.escapingTerminalControls(text))
    }

    /// JSON may carry DEL and the C1 controls (U+0080-U+009F, CSI among them) raw inside
    /// strings; a terminal acts on them. Written as \u escapes the JSON means the same and
    /// shows them as text (the others below U+0020 are never raw in valid JSON).
    static func escapingTerminalControls(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: { (0x7F...0x9F).contains($0.value) }) else { return json }
        var out = String.UnicodeScalarView()
        for scalar in json.unicodeScalars {
            if (0x7F...0x9F).contains(scalar.value) {
                out.append(contentsOf: "\\u00\(String(scalar.value, radix: 16))".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }
}
