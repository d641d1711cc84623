import CTermhost

/// A tool a feature offers to the assistant and to MCP clients; mirrors
/// `termhost_tool_descriptor_t` (services/tools.h). Declared in `FeatureInfo.tools`, so it is
/// listed from the manifest without running the plugin; implemented by `ToolProviding`.
public struct Tool: Sendable {
    /// Which run modes may use a tool; a planning run may only use read-only tools anyway.
    public struct Modes: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let planning = Modes(rawValue: TERMHOST_TOOL_MODE_PLANNING)
        public static let acting = Modes(rawValue: TERMHOST_TOOL_MODE_ACTING)
        public static let all: Modes = [.planning, .acting]
    }

    public var name: String
    public var description: String
    /// JSON Schema of the arguments (an object schema), as JSON text.
    public var inputSchema: String
    public var readOnly: Bool
    public var parallelSafe: Bool
    public var modes: Modes

    public init(_ name: String, description: String, inputSchema: String, readOnly: Bool,
                parallelSafe: Bool = false, modes: Modes = .all) {
        self.name = name
        self.description = description
        self.inputSchema = inputSchema
        self.readOnly = readOnly
        self.parallelSafe = parallelSafe
        self.modes = modes
    }

    var flags: UInt32 {
        (readOnly ? TERMHOST_TOOL_READ_ONLY : 0) | (parallelSafe ? TERMHOST_TOOL_PARALLEL_SAFE : 0)
    }
}

/// One call of a tool, as the host hands it to the providing instance.
public struct ToolCallRequest: Sendable {
    public var tool: String
    /// A JSON object the host already checked against the tool's schema.
    public var argumentsJSON: String
    /// Unique in the process; `cancelTool(callID:)` names the call by it.
    public var callID: UInt64
    /// The scene the call serves (0: none); its cancellation should end the call too.
    public var scene: UInt64
}

/// Implemented by a `Feature` whose `info.tools` is not empty. The SDK answers the host's
/// `termhost.tool-provider/1` lookup with a table that calls these. Calls may come from any
/// thread, concurrently for parallel-safe tools.
public protocol ToolProviding: AnyObject {
    /// Runs the call and returns its result as JSON text (bounded; no secrets), or throws a
    /// `PluginError` whose message tells the model and the user what went wrong and what to run.
    func callTool(_ call: ToolCallRequest) throws -> String
    /// Asks the running call `callID` to stop soon; `callTool` then throws a CANCELLED error.
    /// Must not wait for it.
    func cancelTool(callID: UInt64)
}

enum ToolProviderBridge {
    /// The table an instance returns for TERMHOST_TOOL_PROVIDER; its context is the instance's
    /// feature_data, valid until destroy() (which frees the table).
    static func table(context: UnsafeMutableRawPointer) -> UnsafeMutablePointer<termhost_tool_provider_t> {
        let t = UnsafeMutablePointer<termhost_tool_provider_t>.allocate(capacity: 1)
        t.initialize(to: termhost_tool_provider_t(
            struct_size: UInt32(MemoryLayout<termhost_tool_provider_t>.size),
            context: context,
            call: { selfPointer, call, err in
                guard let selfPointer, let call = call?.pointee, let tool = call.tool,
                      let arguments = call.arguments_json,
                      let provider = FeatureBridge.provider(selfPointer.pointee.context) else {
                    return termhostFail(err, Int(TERMHOST_ERR_INVALID_ARGUMENT), "tool call without a tool, arguments or provider")
                }
                let request = ToolCallRequest(tool: String(cString: tool), argumentsJSON: String(cString: arguments),
                                              callID: call.call_id, scene: call.scene)
                do {
                    let result = Array(try provider.callTool(request).utf8)
                    result.withUnsafeBufferPointer { bytes in
                        bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(bytes.count, 1)) {
                            call.write_result?(call.sink_user, $0, bytes.count)
                        }
                    }
                    return termhost_status(TERMHOST_OK)
                } catch let error as PluginError {
                    termhostWriteError(err, error.code, error.message)
                    return termhost_status(error.code)
                } catch {
                    return termhostFail(err, Int(TERMHOST_ERR_INTERNAL), "\(error)")
                }
            },
            cancel: { selfPointer, callID in
                guard let selfPointer, let provider = FeatureBridge.provider(selfPointer.pointee.context) else { return }
                provider.cancelTool(callID: callID)
            }))
        return t
    }
}

extension termhost_tool_descriptor_t: TermhostSizedStruct {}
extension termhost_tool_call_t: TermhostSizedStruct {}
extension termhost_tool_provider_t: TermhostSizedStruct {}
extension termhost_host_tools_t: TermhostSizedStruct {}
