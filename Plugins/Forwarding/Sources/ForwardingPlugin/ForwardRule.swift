import Foundation
#if canImport(TermhostSDK)
import TermhostSDK   // the sync-record fuzz target compiles this file with the SDK files it uses
#endif

/// Which way a rule forwards, named after the ssh option that does the same.
enum ForwardKind: String, Codable, Sendable, CaseIterable {
    case local, remote, dynamic

    var flag: String {
        switch self {
        case .local: "-L"
        case .remote: "-R"
        case .dynamic: "-D"
        }
    }

    init?(flag: String) {
        guard let k = ForwardKind.allCases.first(where: { $0.flag == flag }) else { return nil }
        self = k
    }
}

/// A saved (or ad-hoc) forwarding rule. Durable data only: what runs and how it is doing lives
/// in `RuleRuntime`, never here (NOTES §5: durable state never stores live connections).
struct ForwardRule: Codable, Sendable, Equatable {
    /// Stable key in the store; names can change, IDs do not.
    var id: String
    /// Never blank once saved: a blank name is materialized as `defaultName` at save time, so
    /// renaming the host later does not rewrite it.
    var name: String
    /// A saved host's name or user@host[:port], as the SSH transport's open() takes it.
    var host: String
    var kind: ForwardKind
    /// nil: loopback (the default; another address only when the user asks for it).
    var bindAddress: String?
    var bindPort: Int
    /// -L and -R only.
    var targetHost: String?
    var targetPort: Int?

    /// The ssh argument this rule stands for: `-L 8080:localhost:80`, `-D 1080`.
    var sshArgument: String {
        var spec = ""
        if let bindAddress { spec += ForwardSpec.bracketed(bindAddress) + ":" }
        spec += String(bindPort)
        if let targetHost, let targetPort { spec += ":" + ForwardSpec.bracketed(targetHost) + ":" + String(targetPort) }
        return "\(kind.flag) \(spec)"
    }

    /// `prod (-L 8080)`: the host plus the short ssh argument (bind address only when explicit).
    static func defaultName(host: String, kind: ForwardKind, bindAddress: String?, bindPort: Int) -> String {
        let bind = bindAddress.map { ForwardSpec.bracketed($0) + ":" } ?? ""
        return "\(host) (\(kind.flag) \(bind)\(bindPort))"
    }

    /// Checks the ports of a rule read back from the store (which another process, or a sync,
    /// may have written): a port out of range would otherwise reach a C call as Int32.
    func validated() throws(ForwardError) -> ForwardRule {
        do {
            _ = try BoundedNumber.check(bindPort, name: "the port of rule '\(name)' in the store", in: 0...65535)
            if let targetPort {
                _ = try BoundedNumber.check(targetPort, name: "the target port of rule '\(name)' in the store", in: 1...65535)
            }
        } catch { throw ForwardError(error.description) }
        return self
    }

    static func newID() -> String {
        (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// Where a local listener binds: loopback unless an address was given ("*" means all).
    var localBindHost: String {
        switch bindAddress {
        case nil, "localhost": "127.0.0.1"
        case "*", "": "0.0.0.0"
        case let a?: a
        }
    }

    /// What the server is asked to listen on for -R: its loopback unless an address was given.
    var remoteBindHost: String {
        switch bindAddress {
        case nil: "localhost"
        case "*", "": ""
        case let a?: a
        }
    }
}

/// An error whose message names the thing at fault; printed as is.
struct ForwardError: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// Parses ssh's forwarding specs: `[bind_address:]port:host:hostport` for -L and -R,
/// `[bind_address:]port` for -D. IPv6 addresses go in brackets, as with ssh.
enum ForwardSpec {
    struct Parsed: Equatable {
        var bindAddress: String?
        var bindPort: Int
        var targetHost: String?
        var targetPort: Int?
    }

    static func parse(_ kind: ForwardKind, _ text: String) throws(ForwardError) -> Parsed {
        let parts = try split(text, kind: kind)
        let shape = kind == .dynamic ? "[bind_address:]port" : "[bind_address:]port:host:hostport"
        func port(_ s: String, _ what: String) throws(ForwardError) -> Int {
            guard s.utf8.contains(where: { $0 >= 0x30 && $0 <= 0x39 }) else {
                throw ForwardError("\(kind.flag) '\(text)': \(what) '\(s)' is not a number (expected \(shape))")
            }
            do { return try BoundedNumber.integer(s, name: "\(kind.flag) '\(text)': \(what)", in: 0...65535) }
            catch { throw ForwardError(error.description) }
        }
        switch (kind, parts.count) {
        case (.dynamic, 1): return Parsed(bindAddress: nil, bindPort: try port(parts[0], "port"))
        case (.dynamic, 2): return Parsed(bindAddress: parts[0], bindPort: try port(parts[1], "port"))
        case (.local, 3), (.remote, 3), (.local, 4), (.remote, 4):
            let offset = parts.count - 3
            let target = parts[offset + 1]
            guard !target.isEmpty else { throw ForwardError("\(kind.flag) '\(text)': the target host is empty (expected \(shape))") }
            let targetPort = try port(parts[offset + 2], "target port")
            guard targetPort > 0 else { throw ForwardError("\(kind.flag) '\(text)': target port 0 is not a port to connect to") }
            return Parsed(bindAddress: offset == 1 ? parts[0] : nil, bindPort: try port(parts[offset], "port"),
                          targetHost: target, targetPort: targetPort)
        default:
            throw ForwardError("\(kind.flag) '\(text)': expected \(shape)")
        }
    }

    /// Splits on colons outside brackets and removes the brackets.
    static func split(_ text: String, kind: ForwardKind) throws(ForwardError) -> [String] {
        var parts: [String] = [], current = "", depth = 0
        for ch in text {
            switch ch {
            case "[": depth += 1
            case "]":
                depth -= 1
                if depth < 0 { throw ForwardError("\(kind.flag) '\(text)': unbalanced ']'") }
            case ":" where depth == 0: parts.append(current); current = ""
            default: current.append(ch)
            }
        }
        if depth != 0 { throw ForwardError("\(kind.flag) '\(text)': unbalanced '['") }
        parts.append(current)
        return parts
    }

    static func bracketed(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }
}
