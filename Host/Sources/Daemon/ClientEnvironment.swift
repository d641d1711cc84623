#if canImport(TermhostSDK)
import TermhostSDK   // EnvironmentName, VisibleText; the fuzz target compiles their files in
#endif

/// The environment a client sends with a command it asks the daemon to run (`run`'s
/// "environment": an object of variable names to values), which the command's plugins read
/// through termhost.environment/1 instead of the daemon's own.
///
/// Untrusted input: the peer is the daemon's own uid, but the values are whatever its shell
/// exported. Names must be shell identifiers (EnvironmentName), values text without NUL, and the
/// whole bounded (half of a request's limit, DaemonProtocol.maxRequest, leaving the rest to argv).
public enum ClientEnvironment {
    public static let maximumVariables = 4096
    public static let maximumBytes = 128 * 1024

    /// What the client sends: the variables this process has whose names a plugin can ask for,
    /// within the limits (the ones that do not fit are left out, and listed in `left`).
    public static func outgoing(_ environment: [String: String]) -> (variables: [String: String], left: [String]) {
        var variables: [String: String] = [:]
        var left: [String] = []
        var bytes = 0
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) where EnvironmentName.isValid(name) && !value.utf8.contains(0) {
            // As JSON carries it: a control character takes six bytes (\u001b), so the request
            // stays inside DaemonProtocol.maxRequest however the values look.
            let size = name.utf8.count + jsonSize(value) + 6
            if variables.count == maximumVariables || bytes + size > maximumBytes { left.append(name); continue }
            variables[name] = value
            bytes += size
        }
        return (variables, left)
    }

    /// The bytes `text` takes inside a JSON string.
    static func jsonSize(_ text: String) -> Int {
        text.utf8.reduce(0) { size, byte in
            size + (byte < 0x20 ? 6 : byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "/") ? 2 : 1)
        }
    }

    /// The request's environment; nil when it has none (an older client: the daemon's then).
    /// A malformed one is refused whole, with what is wrong: the command must not run with
    /// half of what the user had.
    static func incoming(_ fields: [String: Any]) -> Result<[String: String]?, DaemonProtocol.ProtocolError> {
        guard let raw = fields["environment"] else { return .success(nil) }
        guard let object = raw as? [String: Any] else {
            return .failure(.init("\"environment\" must be an object of variable names to string values"))
        }
        guard object.count <= maximumVariables else {
            return .failure(.init("\"environment\" has \(object.count) variables, over the limit of \(maximumVariables)"))
        }
        var variables: [String: String] = [:]
        var bytes = 0
        for (name, value) in object {
            guard EnvironmentName.isValid(name) else {
                return .failure(.init("\"environment\": '\(VisibleText.of(name))' is not a variable name"))
            }
            guard let text = value as? String, !text.utf8.contains(0) else {
                return .failure(.init("\"environment\": \(name) must be a string without NUL"))
            }
            bytes += name.utf8.count + text.utf8.count + 2
            guard bytes <= maximumBytes else {
                return .failure(.init("\"environment\" is over the limit of \(maximumBytes) bytes"))
            }
            variables[name] = text
        }
        return .success(variables)
    }
}
