// fuzz-sources: Registry/Sources/ToolSchema.swift Registry/Sources/ToolDescriptor.swift Registry/Sources/JSONValue.swift SDK/Swift/TermhostSDK/JSONText.swift SDK/Swift/TermhostSDK/VisibleText.swift
// A tool's input_schema (from a plugin) and a call's arguments (from a model or an MCP client),
// both from any bytes: the input is split at its first NUL into schema and arguments. Neither
// check traps, deep nesting is bounded, and a schema the host accepts is an object schema.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let cut = bytes.firstIndex(of: 0) ?? bytes.count
    let schemaBytes = Data(bytes[..<cut]), argumentBytes = Data(bytes[min(cut + 1, bytes.count)...])
    guard let schema = try? JSONDecoder().decode(JSONValue.self, from: schemaBytes) else { return 0 }
    let problem = ToolSchema.problem(schema)
    if problem == nil {
        guard case .object(let top) = schema else { preconditionFailure("accepted a schema that is not an object") }
        precondition(top["type"] == .string("object"), "accepted a schema that is not an object schema")
    }
    let tool = ToolDescriptor(name: "fuzz_tool", description: "fuzz", inputSchema: schema, readOnly: true)
    precondition((tool.problem == nil) == (problem == nil))
    guard problem == nil, let arguments = try? JSONDecoder().decode(JSONValue.self, from: argumentBytes) else { return 0 }
    if let mismatch = ToolSchema.mismatch(arguments, against: schema) {
        precondition(mismatch.hasPrefix("argument '") || mismatch.hasPrefix("the arguments"), "message \(mismatch)")
    }
    return 0
}
