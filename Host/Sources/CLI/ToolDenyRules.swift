import Foundation

/// The operator's (and the user's) Deny for a tool, as `termhost tools call` must honour it: the
/// same `"assistant": {"tools": {...}}` rules the Assistant's gate reads, Deny only. A person at
/// the CLI may run a tool the policy asks about (they typed it), but never one it denies. A file
/// whose assistant rules cannot be read refuses every call (fail closed, as the Assistant does).
enum ToolDenyRules {
    /// Why `tool` is refused, or nil.
    static func refusal(tool: String, operatorPolicy: String, userConfig: String) -> String? {
        for (source, path) in [("operator policy", operatorPolicy), ("user config", userConfig)] {
            guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { continue }
            guard let file = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                return "the assistant's policy is unusable: \(source) \(path) is not a JSON object; nothing runs until it is fixed"
            }
            guard let assistant = file["assistant"] else { continue }
            guard let rules = ((assistant as? [String: Any])?["tools"] ?? [String: Any]()) as? [String: Any] else {
                return "the assistant's policy is unusable: \(source) \(path): assistant.tools is not an object; nothing runs until it is fixed"
            }
            for key in [tool, "*"] where (rules[key] as? String) == "deny" {
                return "\(tool) is set to deny by \(source) \(path) (assistant.tools.\(key)); the command line is held to it too"
            }
        }
        return nil
    }
}
