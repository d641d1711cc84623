#if canImport(TermhostSDK)
import TermhostSDK   // VisibleText; the fuzz targets compile VisibleText.swift in instead
#endif

/// The subset of JSON Schema a tool's input_schema may use (services/tools.h), and the check of
/// a call's arguments against it.
///
/// Design: the host, not the tool, checks arguments, so a tool never sees a call its schema
/// refuses, and every plugin gets the same wording. Only keywords the check implements are
/// accepted in a schema: an unknown one ("pattern", "oneOf") would be a promise the host does not
/// keep, so the tool is refused instead, naming the keyword. Schemas and arguments come from
/// outside (a plugin, a model), so the walk is bounded in depth.
public enum ToolSchema {
    public static let keywords: Set<String> = [
        "type", "properties", "required", "additionalProperties", "enum", "minimum", "maximum",
        "maxLength", "items", "description",
    ]
    public static let types: Set<String> = ["object", "array", "string", "integer", "number", "boolean", "null"]
    /// Deeper schemas or arguments are refused: nothing a tool needs nests this far.
    public static let maxDepth = 32

    /// Why `schema` is not a usable input_schema (said after "its input_schema"), or nil.
    public static func problem(_ schema: JSONValue) -> String? {
        guard case .object(let top) = schema else { return "is not a JSON object" }
        guard top["type"] == .string("object") else { return "must be an object schema (\"type\": \"object\")" }
        return subschemaProblem(schema, at: "", depth: 0)
    }

    private static func subschemaProblem(_ schema: JSONValue, at path: String, depth: Int) -> String? {
        let place = path.isEmpty ? "" : " at \(path)"
        guard depth < maxDepth else { return "nests deeper than \(maxDepth) levels\(place)" }
        guard case .object(let s) = schema else { return "has a schema\(place) that is not a JSON object" }
        for key in s.keys.sorted() where !keywords.contains(key) {
            return "uses '\(VisibleText.of(key))'\(place), which the host does not check (it supports \(keywords.sorted().joined(separator: ", ")))"
        }
        if let type = s["type"] {
            let names: [JSONValue]
            if case .array(let list) = type { names = list } else { names = [type] }
            for n in names {
                guard case .string(let name) = n, types.contains(name) else {
                    return "has a \"type\"\(place) that is not one of \(types.sorted().joined(separator: ", "))"
                }
            }
            if names.isEmpty { return "has an empty \"type\" list\(place)" }
        }
        if let d = s["description"], case .string = d {} else if s["description"] != nil {
            return "has a \"description\"\(place) that is not a string"
        }
        for key in ["minimum", "maximum"] {
            if let v = s[key], case .number(let n) = v, n.isFinite {} else if s[key] != nil {
                return "has a \"\(key)\"\(place) that is not a number"
            }
        }
        if let v = s["maxLength"] {
            guard case .number(let n) = v, n >= 0, n.rounded() == n, n <= Double(Int32.max) else {
                return "has a \"maxLength\"\(place) that is not a whole number from 0"
            }
        }
        if let v = s["enum"] {
            guard case .array(let values) = v, !values.isEmpty else { return "has an \"enum\"\(place) that is not a non-empty array" }
        }
        var properties: [String: JSONValue] = [:]
        if let v = s["properties"] {
            guard case .object(let p) = v else { return "has \"properties\"\(place) that is not an object" }
            properties = p
            for name in p.keys.sorted() {
                if let problem = subschemaProblem(p[name]!, at: join(path, name), depth: depth + 1) { return problem }
            }
        }
        if let v = s["required"] {
            guard case .array(let names) = v else { return "has \"required\"\(place) that is not an array of property names" }
            for n in names {
                guard case .string(let name) = n, properties[name] != nil else {
                    return "requires \(n)\(place), which is not one of its \"properties\""
                }
            }
        }
        if let v = s["additionalProperties"] {
            if case .bool = v {} else if let problem = subschemaProblem(v, at: path + "{*}", depth: depth + 1) { return problem }
        }
        if let v = s["items"], let problem = subschemaProblem(v, at: path + "[*]", depth: depth + 1) { return problem }
        return nil
    }

    /// Why `arguments` do not match `schema` (a schema `problem` accepted), naming the argument:
    /// "argument 'port' must be an integer, not a string". nil when they match.
    public static func mismatch(_ arguments: JSONValue, against schema: JSONValue) -> String? {
        guard case .object = arguments else { return "the arguments must be a JSON object, not \(kind(arguments))" }
        return mismatch(arguments, schema, at: "", depth: 0)
    }

    private static func mismatch(_ value: JSONValue, _ schema: JSONValue, at path: String, depth: Int) -> String? {
        let subject = path.isEmpty ? "the arguments" : "argument '\(VisibleText.of(path))'"
        guard depth < maxDepth else { return "\(subject) nest deeper than \(maxDepth) levels" }
        guard case .object(let s) = schema else { return nil }
        if let type = s["type"] {
            var allowed: [String] = []
            if case .array(let list) = type { allowed = list.compactMap { if case .string(let t) = $0 { t } else { nil } } }
            else if case .string(let t) = type { allowed = [t] }
            if !allowed.contains(where: { matches(value, type: $0) }) {
                return "\(subject) must be \(allowed.map(article).joined(separator: " or ")), not \(kind(value))"
            }
        }
        if let v = s["enum"], case .array(let options) = v, !options.contains(value) {
            return "\(subject) must be one of \(options.map(\.description).joined(separator: ", ")), not \(value.description.prefix(80))"
        }
        switch value {
        case .number(let n):
            if let v = s["minimum"], case .number(let low) = v, n < low { return "\(subject) must be at least \(JSONValue.number(low)), not \(value)" }
            if let v = s["maximum"], case .number(let high) = v, n > high { return "\(subject) must be at most \(JSONValue.number(high)), not \(value)" }
        case .string(let text):
            if let v = s["maxLength"], case .number(let limit) = v, Double(text.unicodeScalars.count) > limit {
                return "\(subject) is \(text.unicodeScalars.count) characters, more than the \(JSONValue.number(limit)) it may have"
            }
        case .array(let items):
            if let itemSchema = s["items"] {
                for (i, item) in items.enumerated() {
                    if let m = mismatch(item, itemSchema, at: "\(path)[\(i)]", depth: depth + 1) { return m }
                }
            }
        case .object(let members):
            var properties: [String: JSONValue] = [:]
            if let v = s["properties"], case .object(let p) = v { properties = p }
            if let v = s["required"], case .array(let names) = v {
                for n in names {
                    if case .string(let name) = n, members[name] == nil {
                        return "argument '\(VisibleText.of(join(path, name)))' is missing (it is required)"
                    }
                }
            }
            for name in members.keys.sorted() {
                let member = members[name]!
                if let p = properties[name] {
                    if let m = mismatch(member, p, at: join(path, name), depth: depth + 1) { return m }
                    continue
                }
                switch s["additionalProperties"] {
                case .bool(false)?:
                    let known = properties.keys.sorted()
                    return "argument '\(VisibleText.of(join(path, name)))' is not one this tool takes"
                        + (known.isEmpty ? " (it takes none)" : " (it takes \(known.joined(separator: ", ")))")
                case .object(let extra)?:
                    if let m = mismatch(member, .object(extra), at: join(path, name), depth: depth + 1) { return m }
                default:
                    break
                }
            }
        default:
            break
        }
        return nil
    }

    private static func join(_ path: String, _ name: String) -> String { path.isEmpty ? name : path + "." + name }

    private static func matches(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .bool), ("null", .null), ("number", .number):
            true
        case ("integer", .number(let n)):
            n.isFinite && n.rounded() == n
        default:
            false
        }
    }

    private static func article(_ type: String) -> String {
        switch type {
        case "object", "array", "integer": "an \(type)"
        case "null": "null"
        default: "a \(type)"
        }
    }

    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .number(let n): n.rounded() == n ? "an integer" : "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
