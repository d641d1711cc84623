import AssistantCore
import CTermhost
import Foundation
import TermhostSDK

/// The host's tool catalog (termhost.tools/1, through the SDK's HostTools) as the run engine's
/// runner: the catalog read once per run, each call checked by the host against its schema and
/// run by the feature that offers it, `cancel` forwarded by call number.
struct ToolService: RunToolRunner {
    let tools: HostTools
    let scene: UInt64

    init?(host: PluginHost, scene: UInt64) {
        guard let tools = host.tools else { return nil }
        self.tools = tools
        self.scene = scene
    }

    /// The enabled features' tools, sorted by name.
    func catalog() throws -> [RunTool] { try Self.parse(Data(try tools.catalog().utf8)) }

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
        do {
            return .result(try tools.call(tool: call.name, argumentsJSON: call.argumentsJSON, callID: number, scene: scene))
        } catch {
            return error.code == Int32(TERMHOST_ERR_CANCELLED) ? .cancelled : .error(error.message)
        }
    }

    func cancel(number: UInt64) { tools.cancel(callID: number) }
}
