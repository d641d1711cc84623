import AssistantCore
import TermhostSDK

/// Whether one call may run: the policy gate (`ToolGate`) with the operator's and user's
/// policy files, the plugin's store for remembered approvals and the audit log, and the person
/// at the terminal through the interact service (none when the scene cannot prompt). A policy
/// file that cannot be read or parsed refuses every call, naming the file.
struct CallApproval {
    let host: PluginHost
    let scene: UInt64
    let runID: String
    let mode: RunEngine.Mode
    /// The run's full access (pre-approves Asks where the policy allows it).
    let fullAccess: Bool
    /// "Approve for me": decides Asks before the person, where the policy allows it.
    let reviewer: (any CallReviewer)?
    private let gate: Result<ToolGate, AssistantPolicyError>

    init(host: PluginHost, scene: UInt64, runID: String, mode: RunEngine.Mode,
         fullAccess: Bool = false, reviewer: (any CallReviewer)? = nil) {
        self.host = host
        self.scene = scene
        self.runID = runID
        self.mode = mode
        self.fullAccess = fullAccess
        self.reviewer = reviewer
        guard let store = host.store else {
            gate = .failure(AssistantPolicyError(field: "store", message: "the host store is unavailable"))
            return
        }
        gate = Result { () throws(AssistantPolicyError) -> ToolGate in
            ToolGate(policy: try AssistantPolicyFiles.load(), judge: ClassifierJudge(), storage: StorePolicyStorage(store: store))
        }
    }

    /// The policy's warnings (user rules wider than the operator's), to print once per run.
    var warnings: [String] { policy?.warnings ?? [] }

    /// The policy in force, nil when it could not be read.
    var policy: AssistantPolicy? { (try? gate.get())?.policy }

    func decide(_ call: ToolCall, _ tool: RunTool) -> RunCallDecision {
        let gate: ToolGate
        switch self.gate {
        case .success(let g): gate = g
        case .failure(let problem): return .refuse("refused: the assistant's policy is unusable (\(problem.message)); nothing runs until it is fixed")
        }
        var modes = Set<RunMode>()
        if tool.planning { modes.insert(.planning) }
        if tool.acting { modes.insert(.acting) }
        let gateCall = GateCall(runID: runID, toolName: call.name, toolReadOnly: tool.readOnly, modes: modes,
                                argumentsJSON: call.argumentsJSON)
        let person: (any ApprovalPrompter)? = host.interact.flatMap { interact in
            interact.canPrompt(scene: scene) ? InteractPrompter(interact: interact, scene: scene) : nil
        }
        switch gate.decide(gateCall, run: GateRun(mode: mode == .planning ? .planning : .acting, fullAccess: fullAccess, reviewer: reviewer != nil),
                         prompter: person, reviewer: reviewer) {
        case .run: return .run
        case .refuse(let message, _): return .refuse(message)
        }
    }
}

/// The approval prompt through the interact service: the request's lines, then its choices.
struct InteractPrompter: ApprovalPrompter {
    let interact: Interact
    let scene: UInt64

    func ask(_ request: ApprovalRequest) -> ApprovalAnswer {
        guard let index = try? interact.choose(request.text + "\nAllow it?", from: request.choices, scene: scene) else { return .deny }
        return request.answer(choice: index)
    }
}
