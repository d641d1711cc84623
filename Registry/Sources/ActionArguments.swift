import Foundation

/// A usage error in an action's arguments, naming the parameter: the action is not called.
public struct ActionArgumentError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One argument converted to its declared C type, ready for the call.
public enum ActionValue: Equatable, Sendable {
    case bool(Bool)
    case int32(Int32)
    case int64(Int64)
    case uint32(UInt32)
    case uint64(UInt64)
    case double(Double)
    /// UTF-8 without NUL (the C side gets it NUL-terminated).
    case string([UInt8])
    /// Any bytes, NUL included (the C side gets a pointer and a length).
    case bytes([UInt8])
    /// Valid JSON text without NUL.
    case json([UInt8])
}

/// Converts an action's arguments from the command line (one word per parameter, in order) or
/// from a JSON object (one key per parameter), checking range and encoding against the
/// declaration. Every failure names the parameter, and nothing is called.
///
/// Words: bool `true`/`false`; integers in decimal (`-` only for signed types); double as Swift
/// reads it, finite; string as UTF-8; bytes in base64; json as JSON text. JSON: bool, integer
/// numbers without fraction or exponent, any finite number for double, strings, base64 strings
/// for bytes, any value for json.
public enum ActionArguments {
    public static func fromWords(_ words: [[UInt8]], for action: ActionDescriptor) throws(ActionArgumentError) -> [ActionValue] {
        guard words.count == action.params.count else {
            let names = action.params.map(\.name).joined(separator: " ")
            throw ActionArgumentError("action '\(action.name)' takes \(action.params.count) argument\(action.params.count == 1 ? "" : "s")"
                                      + (names.isEmpty ? "" : " (\(names))") + ", not \(words.count)")
        }
        var values: [ActionValue] = []
        for (w, p) in zip(words, action.params) {
            do throws(ActionArgumentError) { values.append(try word(w, as: p.type)) } catch {
                throw ActionArgumentError("parameter '\(p.name)' (\(p.type.rawValue)): \(error)")
            }
        }
        return values
    }

    public static func fromJSON(_ text: [UInt8], for action: ActionDescriptor) throws(ActionArgumentError) -> [ActionValue] {
        let parsed: ActionJSON
        do { parsed = try ActionJSON.parse(text) } catch { throw ActionArgumentError("the arguments are not JSON: \(error)") }
        guard case .object(let members) = parsed else { throw ActionArgumentError("the arguments must be a JSON object") }
        var byName: [String: ActionJSON] = [:]
        for (key, value) in members {
            guard action.params.contains(where: { $0.name == key }) else {
                throw ActionArgumentError("action '\(action.name)' has no parameter '\(ActionJSON.quote(Array(key.utf8)).dropFirst().dropLast())'")
            }
            guard byName.updateValue(value, forKey: key) == nil else { throw ActionArgumentError("parameter '\(key)' is given twice") }
        }
        var values: [ActionValue] = []
        for p in action.params {
            guard let value = byName[p.name] else { throw ActionArgumentError("parameter '\(p.name)' (\(p.type.rawValue)) is missing") }
            do throws(ActionArgumentError) { values.append(try json(value, as: p.type)) } catch {
                throw ActionArgumentError("parameter '\(p.name)' (\(p.type.rawValue)): \(error)")
            }
        }
        return values
    }

    /// One word of the command line as `type`.
    public static func word(_ w: [UInt8], as type: ActionDescriptor.ValueType) throws(ActionArgumentError) -> ActionValue {
        switch type {
        case .void: throw ActionArgumentError("void takes no value")
        case .bool:
            if w == Array("true".utf8) { return .bool(true) }
            if w == Array("false".utf8) { return .bool(false) }
            throw ActionArgumentError("expected true or false, not \(shown(w))")
        case .int32, .int64, .uint32, .uint64: return try integer(w, as: type)
        case .double:
            guard let text = String(validating: w, as: UTF8.self), let d = Double(text), d.isFinite,
                  !text.contains(where: { $0.isWhitespace }) else {
                throw ActionArgumentError("expected a finite number, not \(shown(w))")
            }
            return .double(d)
        case .string: return .string(try utf8(w))
        case .bytes:
            guard let data = Data(base64Encoded: Data(w)) else { throw ActionArgumentError("expected base64, not \(shown(w))") }
            return .bytes(Array(data))
        case .json:
            do { _ = try ActionJSON.parse(w) } catch { throw ActionArgumentError("not JSON: \(error)") }
            return .json(w)
        }
    }

    /// One JSON value as `type`.
    public static func json(_ v: ActionJSON, as type: ActionDescriptor.ValueType) throws(ActionArgumentError) -> ActionValue {
        switch (type, v) {
        case (.bool, .bool(let b)): return .bool(b)
        case (.int32, .number(let n)), (.int64, .number(let n)), (.uint32, .number(let n)), (.uint64, .number(let n)):
            return try integer(Array(n.utf8), as: type)
        case (.double, .number(let n)):
            guard let d = Double(n), d.isFinite else { throw ActionArgumentError("\(n) is out of range for a double") }
            return .double(d)
        case (.string, .string(let s)): return .string(try utf8(s))
        case (.bytes, .string(let s)):
            guard let data = Data(base64Encoded: Data(s)) else { throw ActionArgumentError("expected a base64 string") }
            return .bytes(Array(data))
        case (.json, _): return .json(Array(v.text.utf8))
        default:
            let expected = switch type {
            case .bool: "true or false"
            case .int32, .int64, .uint32, .uint64: "an integer"
            case .double: "a number"
            case .string: "a string"
            case .bytes: "a base64 string"
            case .json, .void: "a value"
            }
            throw ActionArgumentError("expected \(expected), not \(v.text.prefix(40))")
        }
    }

    static func integer(_ w: [UInt8], as type: ActionDescriptor.ValueType) throws(ActionArgumentError) -> ActionValue {
        let negative = w.first == UInt8(ascii: "-")
        let digits = negative ? w.dropFirst() : w[...]
        guard !digits.isEmpty, digits.count <= 40, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw ActionArgumentError("expected an integer, not \(shown(w))")
        }
        let text = String(decoding: w, as: UTF8.self)
        let (low, high): (String, String) = switch type {
        case .int32: (String(Int32.min), String(Int32.max))
        case .int64: (String(Int64.min), String(Int64.max))
        case .uint32: ("0", String(UInt32.max))
        default: ("0", String(UInt64.max))
        }
        let range = ActionArgumentError("\(text) is out of range (\(low) to \(high))")
        switch type {
        case .int32: guard let v = Int32(text) else { throw range }; return .int32(v)
        case .int64: guard let v = Int64(text) else { throw range }; return .int64(v)
        case .uint32:
            guard !negative || digits.allSatisfy({ $0 == UInt8(ascii: "0") }) else { throw range }
            guard let v = UInt32(String(decoding: digits, as: UTF8.self)) else { throw range }
            return .uint32(v)
        default:
            guard !negative || digits.allSatisfy({ $0 == UInt8(ascii: "0") }) else { throw range }
            guard let v = UInt64(String(decoding: digits, as: UTF8.self)) else { throw range }
            return .uint64(v)
        }
    }

    static func utf8(_ w: [UInt8]) throws(ActionArgumentError) -> [UInt8] {
        guard String(validating: w, as: UTF8.self) != nil else { throw ActionArgumentError("it is not UTF-8") }
        guard !w.contains(0) else { throw ActionArgumentError("a string may not contain NUL (use bytes)") }
        return w
    }

    /// A word quoted for a message: control characters and invalid UTF-8 made visible, cut at 40.
    static func shown(_ w: [UInt8]) -> String {
        let q = ActionJSON.quote(Array(w.prefix(40)))
        return "'" + q.dropFirst().dropLast() + (w.count > 40 ? "…" : "") + "'"
    }
}
