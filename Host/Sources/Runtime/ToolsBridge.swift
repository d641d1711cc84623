import CTermhost
import Foundation
import TermhostSDK

/// `termhost.tools/1` (SDK/include/termhost/services/tools.h) over the runtime's `ToolService`.
/// Added in ABI 1.3.
extension HostBridge {
    nonisolated(unsafe) static let toolsTable: UnsafeMutablePointer<termhost_host_tools_t> = {
        let t = UnsafeMutablePointer<termhost_host_tools_t>.allocate(capacity: 1)
        t.initialize(to: termhost_host_tools_t(
            struct_size: UInt32(MemoryLayout<termhost_host_tools_t>.size),
            catalog: { host, sink, user, err in
                guard let host, let sink else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "catalog: host or sink is NULL") }
                guard let tools = HostBridge.context(host).services.tools else {
                    return termhostFail(err, TERMHOST_ERR_UNSUPPORTED, "catalog: the tool catalog is ready once features are resolved (after init())")
                }
                let json = Array(tools.catalogJSON.utf8)
                json.withUnsafeBufferPointer { bytes in
                    bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) { sink(user, $0, bytes.count) }
                }
                return termhost_status(TERMHOST_OK)
            },
            call: { host, call, err in
                guard let host, let call, let sink = call.pointee.write_result else {
                    return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "call: host, call or its write_result is NULL")
                }
                guard let tools = HostBridge.context(host).services.tools else {
                    return termhostFail(err, TERMHOST_ERR_UNSUPPORTED, "call: the tool catalog is ready once features are resolved (after init())")
                }
                let name: String, arguments: String
                do throws(BoundaryArguments.Refusal) {
                    name = try BoundaryArguments.text(call.pointee.tool, "tool", call: "call")
                    arguments = try BoundaryArguments.text(call.pointee.arguments_json, "arguments_json", call: "call")
                } catch { return HostBridge.refuse(err, error) }
                switch tools.call(tool: name, argumentsJSON: arguments, callID: call.pointee.call_id, scene: call.pointee.scene) {
                case .success(let result):
                    let bytes = Array(result.utf8)
                    bytes.withUnsafeBufferPointer { b in
                        b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: b.count) { sink(call.pointee.sink_user, $0, b.count) }
                    }
                    return termhost_status(TERMHOST_OK)
                case .failure(let failure):
                    return termhostFail(err, Int(failure.code), failure.message)
                }
            },
            cancel: { host, callID in
                guard let host else { return }
                HostBridge.context(host).services.tools?.cancel(callID: callID)
            }))
        return t
    }()
}
