import CTermhost
import Synchronization

/// The host's tool catalog, `termhost.tools/1` (services/tools.h), for a plugin that uses
/// tools rather than offering them: the Assistant, an MCP bridge. Policy is the caller's job:
/// the host checks only that the tool exists and that the arguments match its schema.
///
/// ```swift
/// guard let tools = host.tools else { throw PluginError("this host has no tool catalog (ABI 1.3)") }
/// let catalog = try tools.catalog()                    // JSON array, sorted by name
/// let id = HostTools.nextCallID()
/// let result = try tools.call(tool: "local_time", argumentsJSON: "{}", callID: id, scene: scene)
/// ```
/// [any-thread]
public struct HostTools: @unchecked Sendable {
    let host: UnsafePointer<termhost_host_t>
    let vtable: UnsafePointer<termhost_host_tools_t>

    /// `termhost_host_tools_t.catalog`: every enabled feature's tools as one JSON array of
    /// {"name","description","input_schema","read_only","parallel_safe","modes","feature"}.
    public func catalog() throws(PluginError) -> String {
        let bytes = try ByteSink.collect { user, err in
            vtable.pointee.catalog(host, { user, json, size in
                ByteSink.sink(user, json.map { UnsafeRawPointer($0) }, size)
            }, user, err)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `termhost_host_tools_t.call`: runs `tool` with a JSON object of arguments and returns
    /// its result (JSON text). Throws the host's refusal (INVALID_ARGUMENT naming the argument,
    /// NOT_FOUND for a tool no enabled feature offers) or the tool's own error, with its code.
    /// `scene`: the scene the call serves (0 for none); cancelling it cancels the call.
    public func call(tool: String, argumentsJSON: String, callID: UInt64, scene: UInt64) throws(PluginError) -> String {
        let bytes = try ByteSink.collect { user, err in
            tool.withCString { cTool in
                argumentsJSON.withCString { cArguments in
                    var request = termhost_tool_call_t(
                        struct_size: UInt32(MemoryLayout<termhost_tool_call_t>.size), tool: cTool, arguments_json: cArguments,
                        call_id: callID, scene: scene,
                        write_result: { user, json, size in ByteSink.sink(user, json.map { UnsafeRawPointer($0) }, size) },
                        sink_user: user)
                    return vtable.pointee.call(host, &request, err)
                }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `termhost_host_tools_t.cancel`: asks the running call `callID` to stop; `call` then
    /// throws a CANCELLED error. Unknown or finished IDs are ignored. Never waits.
    public func cancel(callID: UInt64) {
        vtable.pointee.cancel(host, callID)
    }

    /// A call ID this plugin has not used before, below 2^63 (the host's own calls draw from
    /// the upper half). The host refuses an ID a running call already has.
    public static func nextCallID() -> UInt64 {
        lastCallID.add(1, ordering: .relaxed).newValue
    }

    private static let lastCallID = Atomic<UInt64>(0)
}

extension PluginHost {
    /// termhost.tools/1, or nil in a host older than ABI 1.3.
    public var tools: HostTools? {
        typed(TERMHOST_SERVICE_TOOLS, termhost_host_tools_t.self).map { HostTools(host: raw, vtable: $0) }
    }
}
