import AssistantCore
import Foundation
import TermhostSDK

/// The person behind an MCP client, asked through elicitation/create (MCP 2025-06-18 and
/// later, when the client declared the `elicitation` capability): the form's message is the
/// approval request exactly as a terminal shows it (tool, host, command, working directory,
/// why asked; control characters made visible), and its fields are `approve` (a yes/no, no
/// preset: a form sent back untouched refuses) and, when the policy offers remembering, `remember` (always for this command family
/// on this host). Only "accept" with `approve` true runs the call; "decline", "cancel", an
/// error answer, the call's cancellation or the end of the session are a no.
struct MCPElicitation: ApprovalPrompter {
    let server: MCPServer
    let call: JSONRPCID

    func ask(_ request: ApprovalRequest) -> ApprovalAnswer {
        var properties: [String: Any] = [
            "approve": ["type": "boolean", "title": "Run it", "description": "Run this call now", "default": false],
        ]
        if let family = request.family {
            properties["remember"] = ["type": "boolean", "default": false,
                                      "title": "Always allow '\(VisibleText.of(family))' on \(VisibleText.of(request.host ?? "any host"))"]
        }
        let params: [String: Any] = [
            "message": request.text,
            "requestedSchema": ["type": "object", "properties": properties, "required": ["approve"]],
        ]
        guard let reply = server.ask("elicitation/create", params, for: call),
              let result = reply as? [String: Any], result["action"] as? String == "accept",
              let content = result["content"] as? [String: Any], content["approve"] as? Bool == true else {
            return .deny
        }
        return request.family != nil && content["remember"] as? Bool == true ? .always : .once
    }
}

extension MCPServer {
    /// Sends a request to the client on behalf of call `call` and waits for its result; nil
    /// for an error answer, or when the call is cancelled or the session ends first (the
    /// client is then told with notifications/cancelled).
    func ask(_ method: String, _ params: [String: Any], for call: JSONRPCID) -> Any? {
        let id: JSONRPCID? = lock.withLock {
            guard !closing, !(calls[call]?.cancelled ?? true) else { return nil }
            nextRequest += 1
            let id = JSONRPCID.string("termhost-\(nextRequest)")
            replies[id] = .pending
            return id
        }
        guard let id else { return nil }
        output.send(JSONRPCMessage.request(id, method, params))
        let reply: Reply? = lock.withLock {
            while case .pending? = replies[id], !closing, !(calls[call]?.cancelled ?? true) { lock.wait() }
            return replies.removeValue(forKey: id)
        }
        switch reply {
        case .answered(let result, nil)?:
            return result
        case .answered(_, let error?)?:
            log("termhost mcp: the client answered \(method) with error \(error.code): \(VisibleText.of(error.message))")
            return nil
        default:
            output.send(JSONRPCMessage.notification("notifications/cancelled", ["requestId": id.jsonValue,
                                                                                "reason": "the tool call was cancelled"]))
            return nil
        }
    }
}
