import CTermhost
import Foundation
import TermhostRegistry
import TermhostSDK

/// Typed actions in termhost.tools/1's catalog (so in `termhost tools --json`, the Assistant and
/// `termhost mcp`): each action is a tool named after the feature ID's last part and the action
/// (`actions-c` + `crc32` -> `actions_c_crc32`), with a JSON Schema derived from its declaration.
/// A tool a feature declares itself keeps its name; an action whose name it would take is left
/// out. Calls go through the same conversion and libffi path as `termhost call`.
extension DeclaredAction {
    public var toolName: String {
        let last = feature.rawValue.split(separator: ".").last.map(String.init) ?? feature.rawValue
        return String((last + "_" + action.name).map { $0 == "-" || $0 == "." ? "_" : $0 }.prefix(ToolDescriptor.maxNameBytes))
    }

    /// An object schema with one property per parameter: integer ranges as minimum/maximum,
    /// bytes as a base64 string, json as any value.
    public var toolSchema: String {
        let q = JSONText.quoted
        let properties = action.params.map { p -> String in
            let type: String = switch p.type {
            case .bool: "\"type\":\"boolean\""
            case .int32: "\"type\":\"integer\",\"minimum\":\(Int32.min),\"maximum\":\(Int32.max)"
            case .int64: "\"type\":\"integer\",\"minimum\":\(Int64.min),\"maximum\":\(Int64.max)"
            case .uint32: "\"type\":\"integer\",\"minimum\":0,\"maximum\":\(UInt32.max)"
            case .uint64: "\"type\":\"integer\",\"minimum\":0,\"maximum\":\(UInt64.max)"
            case .double: "\"type\":\"number\""
            case .string: "\"type\":\"string\""
            case .bytes: "\"type\":\"string\""
            case .json, .void: ""
            }
            let note = p.type == .bytes ? " (bytes, base64-encoded)" : p.type == .json ? " (any JSON value)" : ""
            return q(p.name) + ":{" + (type.isEmpty ? "" : type + ",") + "\"description\":" + q(p.description + note) + "}"
        }
        return "{\"type\":\"object\",\"properties\":{" + properties.joined(separator: ",") + "},\"required\":["
            + action.params.map { q($0.name) }.joined(separator: ",") + "],\"additionalProperties\":false}"
    }

    /// The catalog entry, in tools.h's shape.
    public var toolJSON: String {
        let q = JSONText.quoted
        return "{\"name\":\(q(toolName)),\"description\":\(q(action.summary + " (typed action \(path))")),\"input_schema\":\(toolSchema),"
            + "\"read_only\":\(action.readOnly),\"parallel_safe\":false,\"modes\":[\"planning\",\"acting\"],\"feature\":\(q(feature.rawValue))}"
    }

    /// The enabled features' actions as tools, leaving out any whose name a declared tool has.
    public static func tools(_ resolution: Resolution) -> [DeclaredAction] {
        all(resolution).filter { resolution.toolOwners[$0.toolName] == nil }
    }
}

extension ActionValue {
    /// The value as JSON: bytes as a base64 string; a json value as its (checked) text.
    public var jsonText: String {
        switch self {
        case .bool(let b): return b ? "true" : "false"
        case .int32(let n): return String(n)
        case .int64(let n): return String(n)
        case .uint32(let n): return String(n)
        case .uint64(let n): return String(n)
        case .double(let d): return d.isFinite ? "\(d)" : JSONText.quoted("\(d)")
        case .string(let s): return ActionJSON.quote(s)
        case .bytes(let b): return JSONText.quoted(Data(b).base64EncodedString())
        case .json(let j): return String(decoding: j, as: UTF8.self)
        }
    }
}

extension HostRuntime {
    /// A tool call that names an action's tool: its result as JSON, or nil for another tool.
    func callActionTool(_ name: String, argumentsJSON: String) -> Result<String, ToolService.Failure>? {
        guard let declared = DeclaredAction.tools(resolution).first(where: { $0.toolName == name }) else { return nil }
        switch callAction(declared.path, json: Array(argumentsJSON.utf8)) {
        case .success(let value): return .success(value?.jsonText ?? "null")
        case .failure(let f): return .failure(ToolService.Failure(code: f.code, message: f.message))
        }
    }
}
