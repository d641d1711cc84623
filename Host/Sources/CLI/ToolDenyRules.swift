import Foundation

/// The operator's (and the user's) Deny for a tool, as `termhost tools call` must honour it: the
/// same `"assistant": {"tools": {...}}` rules the Assistant's gate reads, Deny only. A person at
/// the CLI may run a tool the policy asks about (they typed it), but never one it denies. Fails
/// closed: a policy file that exists but cannot be read, assistant rules that are not the shape
/// the Assistant reads, and per-command deny patterns and rules by host or tag (which only the
/// Assistant's gate can match against a parsed command and a saved host) all refuse the call.
enum ToolDenyRules {
    /// Why `tool` is refused, or nil.
    static func refusal(tool: String, operatorPolicy: String, userConfig: String) -> String? {
        for (source, path) in [("operator policy", operatorPolicy), ("user config", userConfig)] where !path.isEmpty {
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
                let code = (error as NSError).code
                if code == NSFileReadNoSuchFileError || code == NSFileNoSuchFileError { continue }
                return "the assistant's policy is unusable: \(source) \(path) cannot be read; nothing runs until it is fixed"
            }
            if data.isEmpty { continue }
            func unusable(_ why: String) -> String {
                "the assistant's policy is unusable: \(source) \(path): \(why); nothing runs until it is fixed"
            }
            guard let file = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return unusable("not a JSON object") }
            guard let assistantValue = file["assistant"] else { continue }
            guard let assistant = assistantValue as? [String: Any] else { return unusable("assistant is not an object") }
            guard let rules = (assistant["tools"] ?? [String: Any]()) as? [String: Any] else { return unusable("assistant.tools is not an object") }
            // The tool's own entry decides; "*" only when it has none (the gate's order).
            let key = rules[tool] != nil ? tool : "*"
            switch rules[key] {
            case nil: continue
            case let level as String:
                if level == "deny" {
                    return "\(tool) is set to deny by \(source) \(path) (assistant.tools.\(key)); the command line is held to it too"
                }
            case let object as [String: Any]:
                if object["default"] as? String == "deny" {
                    return "\(tool) is set to deny by \(source) \(path) (assistant.tools.\(key).default); the command line is held to it too"
                }
                for scope in ["hosts", "tags"] where !((object[scope] as? [String: Any])?.isEmpty ?? (object[scope] == nil)) {
                    return "\(tool) has rules by \(scope == "hosts" ? "host" : "tag") in \(source) \(path) (assistant.tools.\(key).\(scope)), which only the assistant's gate matches; run it through 'termhost ask', or call it there"
                }
                if let patterns = object["deny"] as? [Any], !patterns.isEmpty {
                    return "\(tool) has per-command deny rules in \(source) \(path) (assistant.tools.\(key).deny), which only the assistant's gate matches; run it through 'termhost ask', or call it there"
                }
            default:
                return unusable("assistant.tools.\(key) is not a level or an object of per-command rules")
            }
        }
        return nil
    }
}
