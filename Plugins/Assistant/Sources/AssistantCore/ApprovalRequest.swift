import TermhostSDK

/// What a person is asked before a call runs: exactly what will run, where, and why it was not
/// approved by itself. Every value comes from the model (or a server), so `text` shows control
/// characters instead of obeying them: a command with an escape sequence or a newline cannot
/// redraw the prompt or fake a second line.
public struct ApprovalRequest: Sendable, Equatable {
    public var tool: String
    public var host: String?
    /// For `ssh_exec`, the command as it will be sent.
    public var command: String?
    public var workingDirectory: String?
    /// For other tools, their arguments as the tool will get them.
    public var argumentsJSON: String
    /// Why the call needs a yes (the rule, and for a command the part not proven read-only).
    public var reason: String
    /// The command family "always" would remember, or nil when "always" is not offered.
    public var family: String?

    public init(tool: String, host: String?, command: String?, workingDirectory: String?,
                argumentsJSON: String, reason: String, family: String?) {
        self.tool = tool
        self.host = host
        self.command = command
        self.workingDirectory = workingDirectory
        self.argumentsJSON = argumentsJSON
        self.reason = reason
        self.family = family
    }

    /// The lines to show, before the choices.
    public var text: String {
        var lines = ["The assistant wants to run \(VisibleText.of(tool))" + (host.map { " on host \(VisibleText.of($0))" } ?? "") + ":"]
        if let command {
            lines.append("  command: \(VisibleText.of(command))")
            lines.append("  working directory: \(workingDirectory.map { VisibleText.of($0) } ?? "(the login directory)")")
        } else {
            lines.append("  arguments: \(VisibleText.of(argumentsJSON))")
        }
        lines.append("  why asked: \(VisibleText.of(reason))")
        return lines.joined(separator: "\n")
    }

    /// The answers offered, in this order; `answer(choice:)` maps an index back.
    public var choices: [String] {
        var out = ["yes, once"]
        if let family {
            out.append("yes, always for '\(VisibleText.of(family))' on \(VisibleText.of(host ?? "any host"))")
        }
        out.append("no")
        return out
    }

    /// The answer for the index of `choices` the person picked; anything else is a no.
    public func answer(choice index: Int) -> ApprovalAnswer {
        switch (index, family) {
        case (0, _): .once
        case (1, .some): .always
        default: .deny
        }
    }
}

public enum ApprovalAnswer: String, Sendable, Equatable {
    case once
    /// Remember this command family on this host (for other tools: the tool on this host).
    case always
    case deny
}

/// An answer and who gave it, for the audit log and the refusal's message.
public struct ApprovalVerdict: Sendable, Equatable {
    public var answer: ApprovalAnswer
    /// "the person at the terminal", "'termhost approvals allow 3' (user ann, /dev/pts/4)".
    public var who: String
    /// Nobody answered in time: the refusal says so instead of naming a person.
    public var timedOut: Bool

    public init(answer: ApprovalAnswer, who: String, timedOut: Bool = false) {
        self.answer = answer
        self.who = who
        self.timedOut = timedOut
    }

    /// The refusal's text when the answer is `.deny`.
    public var refusal: String { timedOut ? "refused: \(who)" : "refused by \(who)" }
}

/// The person at the terminal, or (in the daemon) whoever answers first from any client. A run
/// with no one to ask (unattended, `--json` pipelines, MCP without elicitation) has no
/// prompter, and an Ask is then refused with a message.
public protocol ApprovalPrompter: Sendable {
    /// Blocks until the person answers; an interrupted prompt is a `.deny`.
    func ask(_ request: ApprovalRequest) -> ApprovalAnswer
    /// The answer with who gave it; by default `ask`'s, given by the person at the terminal.
    func decide(_ request: ApprovalRequest) -> ApprovalVerdict
}

extension ApprovalPrompter {
    public func decide(_ request: ApprovalRequest) -> ApprovalVerdict {
        ApprovalVerdict(answer: ask(request), who: "the person at the terminal")
    }
}
