import AssistantCore
import CTermhost
import Foundation
import Synchronization
import TermhostSDK

/// The host's tool catalog (termhost.tools/1, services/tools.h) as the run engine's runner:
/// the catalog read once per run, each call validated by the host against its schema and run
/// by the feature that offers it, `cancel` forwarded by call number.
struct ToolService: RunToolRunner, @unchecked Sendable {
    let host: UnsafePointer<termhost_host_t>
    let vtable: UnsafePointer<termhost_host_tools_t>
    let scene: UInt64

    init?(host: PluginHost, scene: UInt64) {
        guard let raw = host.service(TERMHOST_SERVICE_TOOLS) else { return nil }
        self.host = host.raw
        self.vtable = raw.assumingMemoryBound(to: termhost_host_tools_t.self)
        self.scene = scene
    }

    /// Call numbers unique in this process (tools.h: call_id), shared by every run.
    private static let counter = Atomic<UInt64>(0)
    static func nextCallNumber() -> UInt64 { counter.add(1, ordering: .relaxed).newValue }

    /// The enabled features' tools, sorted by name.
    func catalog() throws -> [RunTool] {
        final class Box { var json = Data() }
        let box = Box()
        var err = termhostEmptyError()
        let rc = vtable.pointee.catalog(host, { user, json, size in
            let box = Unmanaged<Box>.fromOpaque(user!).takeUnretainedValue()
            if let json { box.json = Data(bytes: json, count: size) }
        }, Unmanaged.passUnretained(box).toOpaque(), &err)
        guard rc == Int32(TERMHOST_OK) else { throw PluginError(termhostErrorMessage(err), code: rc) }
        return try Self.parse(box.json)
    }

    static func parse(_ json: Data) throws -> [RunTool] {
        guard let entries = try JSONSerialization.jsonObject(with: json) as? [[String: Any]] else {
            throw PluginError("the host's tool catalog is not a JSON array")
        }
        return entries.compactMap { e -> RunTool? in
            guard let name = e["name"] as? String, let schema = e["input_schema"] else { return nil }
            let modes = e["modes"] as? [String] ?? ["planning", "acting"]
            let schemaData = (try? JSONSerialization.data(withJSONObject: schema, options: [.sortedKeys])) ?? Data("{}".utf8)
            return RunTool(name: name, description: e["description"] as? String ?? "",
                           inputSchemaJSON: String(decoding: schemaData, as: UTF8.self),
                           readOnly: e["read_only"] as? Bool ?? false, parallelSafe: e["parallel_safe"] as? Bool ?? false,
                           planning: modes.contains("planning"), acting: modes.contains("acting"))
        }
    }

    func call(_ call: ToolCall, tool: RunTool, number: UInt64) -> RunToolOutcome {
        final class Box { var result: String? }
        let box = Box()
        var err = termhostEmptyError()
        let rc = call.name.withCString { name in
            call.argumentsJSON.withCString { arguments in
                var c = termhost_tool_call_t(
                    struct_size: UInt32(MemoryLayout<termhost_tool_call_t>.size), tool: name, arguments_json: arguments,
                    call_id: number, scene: scene,
                    write_result: { user, json, size in
                        let box = Unmanaged<Box>.fromOpaque(user!).takeUnretainedValue()
                        box.result = json.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: size), as: UTF8.self) } ?? ""
                    },
                    sink_user: Unmanaged.passUnretained(box).toOpaque())
                return vtable.pointee.call(host, &c, &err)
            }
        }
        switch Int(rc) {
        case TERMHOST_OK: return .result(box.result ?? "null")
        case TERMHOST_ERR_CANCELLED: return .cancelled
        default: return .error(termhostErrorMessage(err))
        }
    }

    func cancel(number: UInt64) { vtable.pointee.cancel(host, number) }
}

/// The runner of a host without termhost.tools/1: the catalog is empty, so nothing is called.
struct NoTools: RunToolRunner {
    func call(_ call: ToolCall, tool: RunTool, number: UInt64) -> RunToolOutcome { .error("this host offers no tools") }
    func cancel(number: UInt64) {}
}
