// fuzz-sources: Plugins/Assistant/Sources/AssistantCore/AssistantPolicyParser.swift Plugins/Assistant/Sources/AssistantCore/AssistantPolicy.swift Plugins/Assistant/Sources/AssistantCore/PolicyLevel.swift SDK/Swift/TermhostSDK/VisibleText.swift Plugins/Assistant/Sources/AssistantCore/CommandRules.swift Plugins/Assistant/Sources/AssistantCore/ShellWords.swift Plugins/Assistant/Sources/AssistantCore/ProgramRule.swift Plugins/Assistant/Sources/AssistantCore/ReadOnlyPrograms.swift Plugins/Assistant/Sources/AssistantCore/CommandWrappers.swift Plugins/Assistant/Sources/AssistantCore/CommandClassifier.swift Plugins/Assistant/Sources/AssistantCore/SedScreen.swift
// The "assistant" part of an operator's policy.json or a user's config.json from any bytes:
// parsing never traps; an accepted part names only valid tool names (or "*"); and whatever the
// two files say, the combined level is at least as strict as each file's own rule, so a user's
// file can never widen the operator's.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // The same bytes as both files, and as the user's file under a fixed operator part.
    guard let part = try? AssistantPolicyPart.parse(bytes, source: "policy.json") else { return 0 }
    for name in part.tools.keys { precondition(name == "*" || ToolName.isValid(name), "tool name '\(name)'") }
    let fixed = AssistantPolicyPart(tools: ["ssh_exec": .ask, "sftp_write": .deny], fullAccess: false, source: "operator")
    for policy in [AssistantPolicy(operatorPart: part, userPart: part), AssistantPolicy(operatorPart: fixed, userPart: part)] {
        for tool in Array(part.tools.keys) + ["ssh_exec", "sftp_write", "get_metrics"] {
            for readOnly in [true, false] {
                let rule = policy.rule(for: tool, readOnly: readOnly)
                if let op = policy.operatorPart.tools[tool] ?? policy.operatorPart.tools["*"] {
                    precondition(rule.level >= op, "user widened \(tool) past the operator")
                }
                if let user = policy.userPart.tools[tool] ?? policy.userPart.tools["*"] {
                    precondition(rule.level >= user, "user's own narrowing of \(tool) lost")
                }
            }
        }
        // Per-command rules: for a command, the combined level is never wider than the
        // operator's own level for that command.
        // Per host and tag too: on any host with any tags (or tags unknown), never wider than
        // the operator's; unknown tags where tag rules exist always deny.
        let hostNames = ["staging-1", "db"] + (policy.operatorPart.commandRules["ssh_exec"]?.hosts.keys.prefix(2).map { $0 } ?? [])
        let tagSets: [[String]?] = [[], ["prod"], nil] + (policy.operatorPart.commandRules["ssh_exec"]?.tags.keys.prefix(2).map { [$0] } ?? [])
        for command in ["rm -rf /", "systemctl status nginx", "sudo -u x rm y", "ls && rm x", "bash -c 'rm x'", "echo $(id)"] {
            for host in hostNames {
                for tags in tagSets {
                    let rule = policy.rule(for: "ssh_exec", readOnly: false, command: command, host: host, tags: tags)
                    if let op = policy.operatorPart.rule(for: "ssh_exec", command: command, host: host, tags: tags) {
                        precondition(rule.level >= op.level, "user widened ssh_exec for '\(command)' on \(host) past the operator")
                    }
                    if tags == nil && policy.needsTags("ssh_exec") { precondition(rule.level == .deny, "unknown tags did not deny") }
                }
            }
        }
        if policy.operatorPart.fullAccess == false { precondition(!policy.allowsFullAccess) }
        _ = policy.warnings
    }
    return 0
}
