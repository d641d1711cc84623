import Foundation

/// What OpenSSH's own client resolves for a host (`ssh -G -F CONFIG HOST`): the reference the
/// `hosts import` tests compare a saved host with, keyword by keyword.
public struct SshG {
    public let output: String
    private let lines: [Substring]

    public init(config: String, host: String, environment: [String: String]) throws {
        let r = try Shell.run("/usr/bin/ssh", ["-G", "-F", config, host], environment: environment)
        guard r.status == 0 else { throw Shell.Failure(description: "ssh -G \(host): \(r.output)") }
        output = r.stdout
        lines = r.stdout.split(separator: "\n")
    }

    /// Every value of a keyword (lower-case, as ssh -G prints it), in order.
    public func all(_ keyword: String) -> [String] {
        lines.compactMap { $0.hasPrefix(keyword + " ") ? String($0.dropFirst(keyword.count + 1)) : nil }
    }

    /// Its first value.
    public func one(_ keyword: String) -> String? { all(keyword).first }
}

extension SSHHarness {
    /// A saved host as `termhost hosts show NAME` prints it, decoded (empty when it is not saved).
    public func savedHost(_ name: String) throws -> [String: Any] {
        let shown = try termhost(["hosts", "show", name])
        return (try? JSONSerialization.jsonObject(with: Data(shown.stdout.utf8))) as? [String: Any] ?? [:]
    }
}
