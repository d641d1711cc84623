import AssistantCore
import TermhostSDK

/// Whether one call may run, for a run started from a terminal scene: read-only calls run;
/// a call that may change state is shown exactly as it will run and asked about through the
/// interact service, and refused when no one can answer.
struct CallApproval {
    let host: PluginHost
    let scene: UInt64

    func decide(_ call: ToolCall, _ tool: RunTool) -> RunCallDecision {
        if tool.readOnly { return .run }
        guard let interact = host.interact, interact.canPrompt(scene: scene) else {
            return .refuse("refused: \(call.name) may change state and needs a person's approval, but no one is at a terminal; run 'termhost assistant' from a terminal to approve it")
        }
        let question = "Allow \(VisibleText.of(call.name)) \(VisibleText.of(call.argumentsJSON))?"
        do {
            return try interact.confirm(question, scene: scene) ? .run : .refuse("refused: the user declined this call")
        } catch {
            return .refuse("refused: the approval prompt failed: \(error.message)")
        }
    }
}
