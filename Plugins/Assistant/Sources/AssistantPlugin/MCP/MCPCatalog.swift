import AssistantCore
import Foundation

/// The tool catalog as MCP's tools/list shows it: each tool's name, description and input
/// schema as the plugin declared them, with annotations from its flags. The catalog says only
/// read-only or not, so a tool that is not read-only is shown as the worst case: possibly
/// destructive, not idempotent. Every tool reaches hosts or files beyond the client
/// (openWorldHint). Annotations are hints for the client; the policy gate decides.
///
/// A tool the policy denies stays listed (as the Assistant's model sees it) and its description
/// says so: the client's model learns that asking is pointless and why, instead of looking for
/// another way to do the same thing, and the list does not change when the policy does.
enum MCPCatalog {
    static func entries(_ tools: [RunTool], policy: AssistantPolicy?) -> [[String: Any]] {
        tools.map { tool in
            var description = tool.description
            if let rule = policy?.rule(for: tool.name, readOnly: tool.readOnly), rule.level == .deny {
                description += " (Termhost's policy denies this tool: \(rule.origin). Calls are refused.)"
            }
            let schema = (try? JSONSerialization.jsonObject(with: Data(tool.inputSchemaJSON.utf8))) as? [String: Any]
                ?? ["type": "object"]
            return [
                "name": tool.name,
                "description": description,
                "inputSchema": schema,
                "annotations": [
                    "readOnlyHint": tool.readOnly,
                    "destructiveHint": !tool.readOnly,
                    "idempotentHint": tool.readOnly,
                    "openWorldHint": true,
                ],
            ]
        }
    }
}
