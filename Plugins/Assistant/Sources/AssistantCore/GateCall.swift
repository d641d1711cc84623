import Foundation

/// One tool call as the gate sees it. Host, command and working directory are read from the
/// arguments themselves, so the prompt shows exactly what the tool will be given.
public struct GateCall: Sendable, Equatable {
    public var runID: String
    public var toolName: String
    /// The catalog's read-only flag (TERMHOST_TOOL_READ_ONLY).
    public var toolReadOnly: Bool
    /// The run modes the catalog lets use the tool.
    public var modes: Set<RunMode>
    /// The model's arguments, already checked against the tool's schema by the host.
    public var argumentsJSON: String
    /// The tags of the saved host the call names, read by the plugin when the policy has rules
    /// by tag (`AssistantPolicy.needsTags`); nil when they could not be read, or were not read:
    /// tag rules then deny, so a caller that forgets them fails closed.
    public var hostTags: [String]?

    public init(runID: String, toolName: String, toolReadOnly: Bool,
                modes: Set<RunMode> = Set(RunMode.allCases), argumentsJSON: String) {
        self.runID = runID
        self.toolName = toolName
        self.toolReadOnly = toolReadOnly
        self.modes = modes
        self.argumentsJSON = argumentsJSON
    }

    /// The tool whose `command` argument the classifier may prove read-only.
    public static let execTool = "ssh_exec"

    /// The `host` argument, when the tool takes one.
    public var host: String? { stringArgument("host") }
    /// Whether the call is given a secret (a `stdin_secret` handle): only a person approves it.
    public var carriesSecret: Bool { stringArgument("stdin_secret") != nil }
    /// The `command` argument of `ssh_exec`.
    public var command: String? { toolName == Self.execTool ? stringArgument("command") : nil }
    /// The `cwd` argument, when the tool takes one; nil means the login directory.
    public var workingDirectory: String? { stringArgument("cwd") }

    private func stringArgument(_ key: String) -> String? {
        guard let data = argumentsJSON.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return object[key] as? String
    }
}

/// What the run is allowed, fixed when it starts.
public struct GateRun: Sendable, Equatable {
    public var mode: RunMode
    /// "Full access": the user pre-approves every Ask of this run (never a Deny). Honoured only
    /// where the policy allows it (`assistant.fullAccess`).
    public var fullAccess: Bool
    /// "Approve for me": Ask calls go to the reviewer first. Honoured only where the policy
    /// allows it (`assistant.reviewer`).
    public var reviewer: Bool

    public init(mode: RunMode, fullAccess: Bool = false, reviewer: Bool = false) {
        self.mode = mode
        self.fullAccess = fullAccess
        self.reviewer = reviewer
    }
}

/// Who or what decided a call, for the audit log.
public enum GateDecider: String, Sendable, Equatable, CaseIterable {
    /// The policy's level (Deny, Approve) or a boundary (mode, planning).
    case policy
    /// The run's full access pre-approved an Ask.
    case fullAccess = "full-access"
    /// A remembered "always" approval for the command family on this host.
    case remembered
    /// The reviewer model ("approve for me").
    case reviewer
    /// The person at the terminal.
    case person
    /// The person at the command line, running a tool with `termhost tools call`.
    case cli
}

/// The gate's answer for one call.
public enum GateDecision: Sendable, Equatable {
    case run(by: GateDecider)
    /// Refused; the message is for the model and says how a person could allow the call.
    case refuse(String, by: GateDecider)
}
