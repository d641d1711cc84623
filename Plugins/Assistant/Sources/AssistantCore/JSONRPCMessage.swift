import Foundation

/// A JSON-RPC 2.0 request ID as MCP allows it: a string or an integer (never null, never a
/// fraction). Echoed back exactly as it came.
public enum JSONRPCID: Hashable, Sendable {
    case number(Int64)
    case string(String)

    /// The JSON value, for JSONSerialization.
    public var jsonValue: Any {
        switch self {
        case .number(let n): NSNumber(value: n)
        case .string(let s): s
        }
    }

    /// Reads an ID (or an MCP progress token, which has the same shape) from a parsed JSON value.
    public init?(jsonValue value: Any?) {
        if let s = value as? String {
            self = .string(s)
        } else if let n = value as? NSNumber, let exact = JSONRPCMessage.integer(n) {
            self = .number(exact)
        } else {
            return nil
        }
    }
}

/// One message of the JSON-RPC 2.0 stream MCP speaks, read from one line (`JSONRPCLines`).
///
/// What is refused, with the code the specification gives: text that is not JSON (-32700,
/// parse error); a batch (an array: MCP removed batching in 2025-06-18), anything that is not an
/// object, a `jsonrpc` other than "2.0", an ID that is not a string or an integer, a message that
/// is neither request, notification nor response (-32600, invalid request); `params` that is not
/// an object (-32602, invalid params; MCP's params are always objects). The error keeps the ID
/// when one could be read, so the answer can name the request.
public enum JSONRPCMessage {
    case request(id: JSONRPCID, method: String, params: [String: Any])
    case notification(method: String, params: [String: Any])
    /// An answer to a request this side sent: `result`, or `error` (its code and message).
    case response(id: JSONRPCID, result: Any?, error: JSONRPCError?)

    public static func parse(_ line: [UInt8]) -> Result<JSONRPCMessage, JSONRPCError> {
        guard let value = try? JSONSerialization.jsonObject(with: Data(line), options: [.fragmentsAllowed]) else {
            return .failure(JSONRPCError(.parseError, "the message is not JSON"))
        }
        if value is [Any] {
            return .failure(JSONRPCError(.invalidRequest, "batches are not supported (MCP sends one message per line)"))
        }
        guard let object = value as? [String: Any] else {
            return .failure(JSONRPCError(.invalidRequest, "a message must be a JSON object"))
        }
        let rawID = object["id"]
        let id = JSONRPCID(jsonValue: rawID)
        func invalid(_ text: String) -> Result<JSONRPCMessage, JSONRPCError> {
            .failure(JSONRPCError(.invalidRequest, text, id: id))
        }
        guard object["jsonrpc"] as? String == "2.0" else { return invalid("\"jsonrpc\" must be \"2.0\"") }
        if rawID != nil && id == nil { return invalid("\"id\" must be a string or an integer") }
        if let method = object["method"] {
            guard let method = method as? String else { return invalid("\"method\" must be a string") }
            let params: [String: Any]
            switch object["params"] {
            case nil: params = [:]
            case let p as [String: Any]: params = p
            default: return .failure(JSONRPCError(.invalidParams, "\"params\" must be an object", id: id))
            }
            if let id { return .success(.request(id: id, method: method, params: params)) }
            return .success(.notification(method: method, params: params))
        }
        guard let id else { return invalid("a message needs a \"method\" or an \"id\"") }
        if let error = object["error"] {
            guard let e = error as? [String: Any], let code = e["code"] as? NSNumber, !isBoolean(code),
                  let message = e["message"] as? String else { return invalid("\"error\" must have a code and a message") }
            return .success(.response(id: id, result: nil, error: JSONRPCError(code: code.intValue, message: message, id: id)))
        }
        guard object.keys.contains("result") else { return invalid("a response needs a \"result\" or an \"error\"") }
        return .success(.response(id: id, result: object["result"], error: nil))
    }

    /// Whether a number JSONSerialization produced came from `true` or `false` (type "c").
    static func isBoolean(_ n: NSNumber) -> Bool { String(cString: n.objCType) == "c" }

    /// The number as an Int64 when it is a whole number in range: not a boolean, not 2.5, not
    /// 1e30 (JSONSerialization gives "d" for numbers with a fraction or exponent, "Q" above
    /// Int64.max).
    static func integer(_ n: NSNumber) -> Int64? {
        switch String(cString: n.objCType) {
        case "c": nil
        case "d", "f": Int64(exactly: n.doubleValue)
        case "Q": Int64(exactly: n.uint64Value)
        default: n.int64Value
        }
    }

    /// One line of output (no newline): a JSON object whose strings escape every control
    /// character, so a result can never end the line early.
    public static func line(_ object: [String: Any]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return #"{"error":{"code":-32603,"message":"the answer could not be encoded"},"id":null,"jsonrpc":"2.0"}"#
        }
        return String(decoding: data, as: UTF8.self)
    }

    public static func result(_ id: JSONRPCID, _ result: [String: Any]) -> String {
        line(["jsonrpc": "2.0", "id": id.jsonValue, "result": result])
    }

    /// An error answer; `id` nil when the request's ID could not be read (JSON null then).
    public static func error(_ id: JSONRPCID?, _ error: JSONRPCError) -> String {
        line(["jsonrpc": "2.0", "id": id?.jsonValue ?? NSNull(), "error": ["code": error.code, "message": error.message]])
    }

    public static func request(_ id: JSONRPCID, _ method: String, _ params: [String: Any]) -> String {
        line(["jsonrpc": "2.0", "id": id.jsonValue, "method": method, "params": params])
    }

    public static func notification(_ method: String, _ params: [String: Any]) -> String {
        line(["jsonrpc": "2.0", "method": method, "params": params])
    }
}

/// A JSON-RPC error: the specification's code and a message for the client's user.
public struct JSONRPCError: Error, Sendable, Equatable {
    public enum Code: Int, Sendable {
        case parseError = -32700
        case invalidRequest = -32600
        case methodNotFound = -32601
        case invalidParams = -32602
        case internalError = -32603
    }

    public var code: Int
    public var message: String
    /// The request's ID when it could be read.
    public var id: JSONRPCID?

    public init(code: Int, message: String, id: JSONRPCID? = nil) {
        self.code = code
        self.message = message
        self.id = id
    }

    public init(_ code: Code, _ message: String, id: JSONRPCID? = nil) {
        self.init(code: code.rawValue, message: message, id: id)
    }
}
