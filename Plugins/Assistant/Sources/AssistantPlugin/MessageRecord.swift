import AssistantCore
import Foundation

/// A transcript entry as one store row (JSON). Tool results are stored after the engine's
/// redaction and truncation, exactly as the model saw them.
enum MessageRecord {
    static func encode(_ message: ChatMessage, run: String, turn: Int) -> [UInt8] {
        var o: [String: Any] = ["run": run, "turn": turn, "at": Date().timeIntervalSince1970]
        switch message {
        case .system(let text): o["role"] = "system"; o["text"] = text
        case .user(let text): o["role"] = "user"; o["text"] = text
        case .assistant(let text, let calls):
            o["role"] = "assistant"
            o["text"] = text
            o["calls"] = calls.map { ["id": $0.id, "name": $0.name, "arguments": $0.argumentsJSON] }
        case .toolResult(let callID, let content, let isError):
            o["role"] = "tool"; o["call"] = callID; o["text"] = content; o["error"] = isError
        }
        return Array((try? JSONSerialization.data(withJSONObject: o, options: [.sortedKeys])) ?? Data())
    }

    /// The message and the run it belongs to; nil for a row that is not one.
    static func decode(_ bytes: [UInt8]) -> (message: ChatMessage, run: String)? {
        guard let o = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let role = o["role"] as? String, let run = o["run"] as? String else { return nil }
        let text = o["text"] as? String ?? ""
        switch role {
        case "system": return (.system(text), run)
        case "user": return (.user(text), run)
        case "assistant":
            let calls = (o["calls"] as? [[String: String]] ?? []).compactMap { c -> ToolCall? in
                guard let id = c["id"], let name = c["name"] else { return nil }
                return ToolCall(id: id, name: name, argumentsJSON: c["arguments"] ?? "{}")
            }
            return (.assistant(text: text, toolCalls: calls), run)
        case "tool":
            guard let call = o["call"] as? String else { return nil }
            return (.toolResult(callID: call, content: text, isError: o["error"] as? Bool ?? true), run)
        default: return nil
        }
    }
}
