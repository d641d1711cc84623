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
    /// client → daemon: {"op": "status" | "stop" | "run" | "sessions" | "open" | "attach" | "events" | "kill", ...}
    case request = 16
    /// daemon → client, one per request, in order: the answer, or {"error": "why"}
    case reply = 17

    // After a reply to "attach", the connection streams one session (Docs/Daemon.md).
    /// daemon → client: terminal output, raw bytes (the first is the replay)
    case output = 32
    /// daemon → client: one session event, a JSON object
    case event = 33
    /// client → daemon: keyboard input, raw bytes (at most 64 KiB a frame)
    case input = 34
    /// client → daemon: {"columns": C, "rows": R}, the client's terminal size (latest wins)
    case resize = 35
    /// client → daemon: detach this client (the session goes on); no payload
    case detach = 36
    /// daemon → client, the last frame of an attachment: {"reason": "..."}, then the daemon closes
    case detached = 37

    // After a reply to "run", until the command ends (Docs/Daemon.md).
    /// client → daemon: {"signal": N}, a terminating signal the client got (1 HUP, 2 INT, 15 TERM)
    case signal = 38
    /// daemon → client, the last frame of a run: {"status": N}, then the daemon closes
    case exited = 39
}

/// The protocol's major version. A client and a daemon of different majors do not talk: the
/// daemon refuses the hello saying both numbers, so the user knows to restart the daemon.
public enum DaemonProtocol {
    public static let version = 1
    /// A request or hello larger than this is refused unread (replies may use the whole frame).
    /// 256 KiB: a `run` carries the client's argv and environment (ClientEnvironment: 128 KiB).
    public static let maxRequest = 256 * 1024
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
        request(payload).map(\.op)
    }

    /// A request's operation and its whole object (the operation's own fields are checked by
    /// the accessors below, where the operation reads them).
    public static func request(_ payload: [UInt8]) -> Result<(op: String, fields: [String: Any]), ProtocolError> {
        switch object(payload) {
        case .failure(let e): return .failure(e)
        case .success(let o):
            guard let op = o["op"] as? String, !op.isEmpty, op.utf8.count <= 64 else {
                return .failure(ProtocolError("the request has no operation (\"op\", 1 to 64 bytes)"))
            }
            return .success((op, o))
        }
    }

    /// A session ID field: 1 to 64 bytes of lowercase hex or ASCII letters, digits, '-' and '_'.
    public static func sessionID(_ o: [String: Any], _ key: String = "session") -> Result<String, ProtocolError> {
        guard let id = o[key] as? String, (1...64).contains(id.utf8.count),
              id.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x5F }) else {
            return .failure(ProtocolError("\"\(key)\" must be a session ID (1 to 64 letters, digits, '-' or '_')"))
        }
        return .success(id)
    }

    /// A whole number field within `range`; `fallback` when absent (nil: required).
    public static func integer(_ o: [String: Any], _ key: String, _ range: ClosedRange<Int>, fallback: Int? = nil) -> Result<Int, ProtocolError> {
        guard let raw = o[key] else {
            return fallback.map { .success($0) } ?? .failure(ProtocolError("\"\(key)\" is missing"))
        }
        guard let n = raw as? NSNumber, !isBool(n), let v = Int(exactly: n.doubleValue), range.contains(v) else {
            return .failure(ProtocolError("\"\(key)\" must be a whole number from \(range.lowerBound) to \(range.upperBound)"))
        }
        return .success(v)
    }

    /// A time field (seconds since 1970, 0 when absent): finite and not negative.
    public static func time(_ o: [String: Any], _ key: String) -> Result<Double, ProtocolError> {
        guard let raw = o[key] else { return .success(0) }
        guard let n = raw as? NSNumber, !isBool(n), n.doubleValue.isFinite, n.doubleValue >= 0 else {
            return .failure(ProtocolError("\"\(key)\" must be a time in seconds since 1970"))
        }
        return .success(n.doubleValue)
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
