import Foundation

/// Where the two files live, found as the host finds them: the operator policy at
/// `$TERMHOST_POLICY` (empty: none) or `/etc/termhost/policy.json`; the user config at
/// `$XDG_CONFIG_HOME/termhost/config.json` (an absolute `XDG_CONFIG_HOME`, else `~/.config`).
public enum AssistantPolicyFiles {
    public static func paths(_ env: [String: String]) -> (operatorPolicy: String, userConfig: String) {
        let policy = env["TERMHOST_POLICY"] ?? "/etc/termhost/policy.json"
        let configHome = env["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (env["HOME"] ?? NSHomeDirectory()) + "/.config"
        return (policy, configHome + "/termhost/config.json")
    }

    /// Both files' `"assistant"` parts. A file that does not exist is an empty part; one that
    /// exists but cannot be read, or whose part is malformed, is an error naming it: runs then
    /// do not start (fail closed), as the host refuses to start on an unreadable policy.
    public static func load(_ env: [String: String] = ProcessInfo.processInfo.environment) throws(AssistantPolicyError) -> AssistantPolicy {
        let (policyPath, configPath) = paths(env)
        let op = try AssistantPolicyPart.parse(read(policyPath), source: "operator policy \(policyPath)")
        let user = try AssistantPolicyPart.parse(read(configPath), source: "user config \(configPath)")
        return AssistantPolicy(operatorPart: op, userPart: user)
    }

    static func read(_ path: String) throws(AssistantPolicyError) -> [UInt8]? {
        guard !path.isEmpty else { return nil }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            let reason = String(cString: strerror(errno))
            throw AssistantPolicyError(field: "file", message: "cannot read \(path): \(reason)")
        }
        defer { try? handle.close() }
        do {
            let data = try handle.read(upToCount: AssistantPolicyPart.fileCap + 1) ?? Data()
            return Array(data)
        } catch {
            throw AssistantPolicyError(field: "file", message: "cannot read \(path): \(error.localizedDescription)")
        }
    }
}
