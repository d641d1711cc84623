import AssistantCore
import Foundation
import TermhostSDK

/// The run's tool runner: `request_secret` answered here, every other call by the host's
/// catalog (ToolService) with its secret handles swapped for their values just before it goes
/// out. The model's arguments (with handles) are what the transcript, the gate, the audit log
/// and the store keep; only the call to the tool carries a value.
///
/// A `stdin_secret` that is not a handle is refused: a value there would have come from the
/// model's own text, not from the person.
struct AssistantToolRunner: RunToolRunner {
    let tools: ToolService?
    let handles: SecretHandles?
    let interact: Interact?
    let scene: UInt64
    let runID: String
    /// Runs a prompt with the terminal given back to it (InterruptKey.paused), in order.
    let prompting: @Sendable (@Sendable () -> RunToolOutcome) -> RunToolOutcome

    func call(_ call: ToolCall, tool: RunTool, number: UInt64) -> RunToolOutcome {
        if call.name == SecretRequest.name { return requestSecret(call) }
        guard let tools else { return .error("this host offers no tools") }
        let gateView = GateCall(runID: runID, toolName: call.name, toolReadOnly: tool.readOnly, argumentsJSON: call.argumentsJSON)
        if let given = Self.stdinSecret(call.argumentsJSON), !Self.isHandle(given) {
            return .error("refused: stdin_secret takes a handle from request_secret (\"secret:\" and 32 hex digits), never a value; call request_secret to ask the person")
        }
        guard let handles else { return tools.call(call, tool: tool, number: number) }
        do {
            let arguments = try handles.substitute(in: call.argumentsJSON, runID: runID, tool: call.name, host: gateView.host ?? "")
            var resolved = call
            resolved.argumentsJSON = arguments
            let outcome = tools.call(resolved, tool: tool, number: number)
            return Self.stdinSecret(call.argumentsJSON) == nil ? outcome : Self.withholdingOutput(outcome)
        } catch {
            return .error("refused: \(error)")
        }
    }

    func cancel(number: UInt64) { tools?.cancel(number: number) }

    private func requestSecret(_ call: ToolCall) -> RunToolOutcome {
        let request: SecretRequestArguments
        switch SecretRequestArguments.parse(call.argumentsJSON) {
        case .success(let a): request = a
        case .failure(let problem): return .error(problem.message)
        }
        guard let handles, let interact, interact.canPrompt(scene: scene) else {
            return .error("refused: no person is at a terminal to type a secret; run the request from a terminal (termhost ask or termhost assistant)")
        }
        let scene = self.scene, runID = self.runID
        return prompting {
            let value: String
            do { value = try interact.prompt(SecretRequest.prompt(request), scene: scene, echo: false) } catch {
                return .error("the secret could not be read: \(error)")
            }
            guard !value.isEmpty else { return .error("refused: the person gave no secret") }
            do {
                let handle = try handles.issue(Array(value.utf8), for: .init(runID: runID, tool: request.tool,
                                                                              host: request.host, purpose: request.purpose))
                return .result(SecretRequest.result(handle: handle, request))
            } catch {
                return .error("the secret could not be kept: \(error)")
            }
        }
    }

    /// What the model gets of a call that was given a secret: its exit status, never its output.
    /// A read of stdin in any encoding (`base64`, `rev`, `od -c`, `xxd`) would hand the model the
    /// secret, and no redaction knows every encoding; the person at the terminal approved the
    /// call and can run it again without the secret to see its output.
    static let withheld = "[withheld: this call was given a secret (stdin_secret), and its output could hold it in any encoding]"

    static func withholdingOutput(_ outcome: RunToolOutcome) -> RunToolOutcome {
        // An error or a cancel is the tool's own text (host unreachable, timed out), never output.
        guard case .result(let json) = outcome else { return outcome }
        guard var object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else { return .error(withheld) }
        for key in ["stdout", "stderr"] where object[key] != nil { object[key] = withheld }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return .error(withheld) }
        return .result(String(decoding: data, as: UTF8.self))
    }

    static func stdinSecret(_ argumentsJSON: String) -> String? {
        guard argumentsJSON.contains("stdin_secret"),
              let object = (try? JSONSerialization.jsonObject(with: Data(argumentsJSON.utf8))) as? [String: Any] else { return nil }
        return object["stdin_secret"] as? String
    }

    static func isHandle(_ text: String) -> Bool {
        let digits = text.dropFirst(SecretHandles.prefix.count)
        return text.hasPrefix(SecretHandles.prefix) && digits.count == 32
            && digits.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }
}
