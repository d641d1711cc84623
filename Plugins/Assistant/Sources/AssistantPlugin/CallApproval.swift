import Foundation
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
    /// A background run in the daemon: its Asks wait there for any client (PendingApprovals).
    let waitsInDaemon: (control: RunControl, conversation: String)?
    private let gate: Result<ToolGate, AssistantPolicyError>

    init(host: PluginHost, scene: UInt64, runID: String, mode: RunEngine.Mode, catalog: [RunTool],
         fullAccess: Bool = false, reviewer: (any CallReviewer)? = nil,
         waitsInDaemon: (control: RunControl, conversation: String)? = nil) {
        self.host = host
        self.scene = scene
        self.runID = runID
        self.mode = mode
        self.fullAccess = fullAccess
        self.reviewer = reviewer
        self.waitsInDaemon = waitsInDaemon
        hostTools = Self.hostTools(catalog)
        guard let store = host.store else {
            gate = .failure(AssistantPolicyError(field: "store", message: "the host store is unavailable"))
            return
        }
        gate = Self.gate(store: store, catalog: catalog)
    }

    /// The gate of both policy files, checked against the catalog: a rule for a tool that does
    /// not exist makes the policy unusable (PolicyCatalogCheck). Also what `termhost mcp` uses.
    static func gate(store: Store, catalog: [RunTool]) -> Result<ToolGate, AssistantPolicyError> {
        Result { () throws(AssistantPolicyError) -> ToolGate in
            let policy = try AssistantPolicyFiles.load()
            if let unknown = policy.unknownTool(in: Set(catalog.map(\.name))) { throw unknown }
            return ToolGate(policy: policy, judge: ClassifierJudge(), storage: StorePolicyStorage(store: store))
        }
    }

    /// The tools that take a saved host (a `host` property in their input schema).
    static func hostTools(_ catalog: [RunTool]) -> Set<String> {
        Set(catalog.filter { tool in
            let schema = (try? JSONSerialization.jsonObject(with: Data(tool.inputSchemaJSON.utf8))) as? [String: Any]
            return (schema?["properties"] as? [String: Any])?["host"] != nil
        }.map(\.name))
    }

    private let hostTools: Set<String>

    /// Why no call can run (the policy is unusable), or nil.
    var problem: AssistantPolicyError? {
        if case .failure(let problem) = gate { return problem }
        return nil
    }

    /// The policy's warnings (user rules wider than the operator's, a deny another tool's
    /// approve undercuts), to print once per run.
    var warnings: [String] { (policy?.warnings ?? []) + (policy?.undercutDenies(hostTools: hostTools) ?? []) }

    /// The policy in force, nil when it could not be read.
    var policy: AssistantPolicy? { (try? gate.get())?.policy }

    /// Audits a call the run refused itself (RunEngine.onRefusedByRun); nothing to write to
    /// when the policy is unusable (the run does not start then).
    func recordRefusal(_ call: ToolCall, _ reason: String) {
        guard case .success(let gate) = gate else { return }
        gate.recordRefusal(GateCall(runID: runID, toolName: call.name, toolReadOnly: false, modes: [], argumentsJSON: call.argumentsJSON),
                           reason: reason)
    }

    func decide(_ call: ToolCall, _ tool: RunTool) -> RunCallDecision {
        let gate: ToolGate
        switch self.gate {
        case .success(let g): gate = g
        case .failure(let problem): return .refuse("refused: the assistant's policy is unusable (\(problem.message)); nothing runs until it is fixed")
        }
        var modes = Set<RunMode>()
        if tool.planning { modes.insert(.planning) }
        if tool.acting { modes.insert(.acting) }
        var gateCall = GateCall(runID: runID, toolName: call.name, toolReadOnly: tool.readOnly, modes: modes,
                                argumentsJSON: call.argumentsJSON)
        if gate.policy.needsTags(call.name) { gateCall.hostTags = HostTags.of(gateCall.host, tools: host.tools, scene: scene) }
        let terminal: (any ApprovalPrompter)? = host.interact.flatMap { interact in
            interact.canPrompt(scene: scene) ? InteractPrompter(interact: interact, scene: scene) : nil
        }
        let anyClient: (any ApprovalPrompter)? = waitsInDaemon.map { w in
            DaemonPrompter(runID: runID, conversation: w.conversation, seconds: gate.policy.approvalSeconds, control: w.control,
                           notifier: ApprovalNotifier(host: host))
        }
        let person = terminal ?? anyClient
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
