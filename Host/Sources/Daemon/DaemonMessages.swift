import Foundation

/// The frame types of protocol 1 and the JSON each carries (Docs/Daemon.md has the table).
/// Every payload is a JSON object in UTF-8; numbers are range-checked and strings bounded here,
/// where they enter, since a client is any process of the user's.
public enum DaemonMessage: UInt32, Sendable {
    /// client → daemon, first frame: {"protocol": 1, "client": "NAME VERSION"}
    case hello = 1
    /// daemon → client, the answer to a hello it accepts: {"protocol": 1, "daemon": "...", "pid": N}
    case welcome = 2
    /// daemon → client, then the daemon closes the connection: {"error": "why"}
    case refused = 3
    /// client → daemon: {"op": "status" | "stop"}
    case request = 16
    /// daemon → client, one per request, in order: the answer, or {"error": "why"}
    case reply = 17
}

/// The protocol's major version. A client and a daemon of different majors do not talk: the
/// daemon refuses the hello saying both numbers, so the user knows to restart the daemon.
public enum DaemonProtocol {
    public static let version = 1
    /// A request or hello larger than this is refused unread (replies may use the whole frame).
    public static let maxRequest = 64 * 1024
    /// The longest client name kept (for the log and `daemon status`).
    public static let maxClientName = 200

    public struct Hello: Equatable, Sendable {
        public var version: Int
        public var client: String

        public init(version: Int, client: String) {
            self.version = version
            self.client = client
        }
    }

    /// The hello's fields, or why it is not one.
    public static func hello(_ payload: [UInt8]) -> Result<Hello, ProtocolError> {
        switch object(payload) {
        case .failure(let e): return .failure(e)
        case .success(let o):
            guard let number = o["protocol"] as? NSNumber, !isBool(number), let version = Int(exactly: number.doubleValue),
                  (1...65_535).contains(version) else {
                return .failure(ProtocolError("the hello has no protocol version (a whole number from 1 to 65535)"))
            }
            guard let client = o["client"] as? String, !client.isEmpty, client.utf8.count <= maxClientName else {
                return .failure(ProtocolError("the hello has no client name (1 to \(maxClientName) bytes)"))
            }
            return .success(Hello(version: version, client: client))
        }
    }

    /// The operation a request asks for (not yet checked against those the daemon knows).
    public static func operation(_ payload: [UInt8]) -> Result<String, ProtocolError> {
        switch object(payload) {
        case .failure(let e): return .failure(e)
        case .success(let o):
            guard let op = o["op"] as? String, !op.isEmpty, op.utf8.count <= 64 else {
                return .failure(ProtocolError("the request has no operation (\"op\", 1 to 64 bytes)"))
            }
            return .success(op)
        }
    }

    /// A JSON object of at most `maxRequest` bytes.
    static func object(_ payload: [UInt8]) -> Result<[String: Any], ProtocolError> {
        guard payload.count <= maxRequest else {
            return .failure(ProtocolError("a request of \(payload.count) bytes, over the limit of \(maxRequest)"))
        }
        guard let value = try? JSONSerialization.jsonObject(with: Data(payload)), let object = value as? [String: Any] else {
            return .failure(ProtocolError("the payload is not a JSON object"))
        }
        return .success(object)
    }

    /// JSON true and false arrive as NSNumber too; Foundation marks them with type "c".
    private static func isBool(_ n: NSNumber) -> Bool { String(cString: n.objCType) == "c" }

    /// A JSON object's bytes, for the daemon's own replies.
    public static func payload(_ object: [String: Any]) -> [UInt8] {
        Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8))
    }

    public struct ProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }
}
