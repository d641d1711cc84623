import Foundation
#if canImport(TermhostSDK)
import TermhostSDK // the fuzz target compiles VisibleText.swift in instead
#endif

/// Why the `"assistant"` part of a policy or config file was refused. The text names the file
/// and the field, as the host's own policy errors do. A refused part fails closed: the plugin
/// starts no run until the file is fixed.
public struct AssistantPolicyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The field at fault (`assistant.tools.ssh_exec`), or `file`.
    public var field: String
    /// The whole sentence once `parse` has named the file; the detail before that.
    public var message: String
    public var description: String { message }

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}

extension AssistantPolicyPart {
    /// Bytes of a whole file larger than this are refused (the host's cap for policy files).
    public static let fileCap = 1 << 20
    /// At most this many tool rules in one file.
    public static let toolRuleCap = 1000

    /// The `"assistant"` object of a whole `policy.json` or `config.json` (`source` names the
    /// file, e.g. `operator policy /etc/termhost/policy.json`). A file without the key, or no
    /// file at all (`bytes` nil), gives an empty part. Unknown keys inside `"assistant"` are
    /// refused: a misspelt `"tool"` must not silently leave a tool on Approve.
    public static func parse(_ bytes: [UInt8]?, source: String) throws(AssistantPolicyError) -> AssistantPolicyPart {
        guard let bytes, !bytes.isEmpty else { return AssistantPolicyPart(source: source) }
        func fail(_ field: String, _ detail: String) -> AssistantPolicyError {
            AssistantPolicyError(field: field, message: "\(source): \(field): \(detail)")
        }
        guard bytes.count <= fileCap else { throw fail("file", "larger than \(fileCap) bytes") }
        let file: PolicyFile
        do {
            file = try JSONDecoder().decode(PolicyFile.self, from: Data(bytes))
        } catch let error as AssistantPolicyError {
            throw fail(error.field, error.message)
        } catch {
            throw fail("file", "malformed JSON or not a JSON object")
        }
        var part = file.assistant ?? AssistantPolicyPart(source: source)
        part.source = source
        return part
    }
}

/// The whole file: only `"assistant"` is read; the host reads the rest.
private struct PolicyFile: Decodable {
    var assistant: AssistantPolicyPart?

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let top = try decoder.container(keyedBy: Key.self)
        let key = Key(stringValue: "assistant")
        guard top.contains(key) else { return }
        guard let object = try? top.nestedContainer(keyedBy: Key.self, forKey: key) else {
            throw AssistantPolicyError(field: "assistant", message: "not a JSON object")
        }
        var part = AssistantPolicyPart(source: "")
        for field in object.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
            switch field.stringValue {
            case "tools":
                guard let rules = try? object.decode([String: ToolRule].self, forKey: field) else {
                    // A rule's own problem (a bad pattern list) is named by its field.
                    if let error = (try? object.decode([String: ToolRuleProbe].self, forKey: field))?.compactMap({ $0.value.problem }).first {
                        throw error
                    }
                    throw AssistantPolicyError(field: "assistant.tools",
                                               message: "expected an object of tool name to \"deny\", \"ask\", \"approve\" or per-command rules")
                }
                guard rules.count <= AssistantPolicyPart.toolRuleCap else {
                    throw AssistantPolicyError(field: "assistant.tools", message: "more than \(AssistantPolicyPart.toolRuleCap) rules")
                }
                for (tool, rule) in rules {
                    guard tool == "*" || ToolName.isValid(tool) else {
                        throw AssistantPolicyError(field: "assistant.tools",
                                                   message: "'\(VisibleText.of(String(tool.prefix(80))))' is not a tool name ([a-z][a-z0-9_]{0,63}) or \"*\"")
                    }
                    switch rule {
                    case .level(let text):
                        guard let level = PolicyLevel(rawValue: text) else {
                            throw AssistantPolicyError(field: "assistant.tools.\(tool)", message: "expected \"deny\", \"ask\" or \"approve\"")
                        }
                        part.tools[tool] = level
                    case .commands(let commands):
                        guard tool == "ssh_exec" else {
                            throw AssistantPolicyError(field: "assistant.tools.\(tool)", message: "per-command rules apply to ssh_exec only")
                        }
                        part.commandRules[tool] = commands
                        if let level = commands.fallback { part.tools[tool] = level }
                    }
                }
            case "fullAccess", "reviewer", "rememberApprovals":
                // JSONDecoder takes only true or false for a Bool, never 0 or "yes".
                guard let flag = try? object.decode(Bool.self, forKey: field) else {
                    throw AssistantPolicyError(field: "assistant.\(field.stringValue)", message: "expected true or false")
                }
                switch field.stringValue {
                case "fullAccess": part.fullAccess = flag
                case "reviewer": part.reviewer = flag
                default: part.rememberApprovals = flag
                }
            case "approvalTimeout":
                let bounds = AssistantPolicyPart.approvalTimeoutBounds
                guard let seconds = try? object.decode(Int.self, forKey: field), bounds.contains(seconds) else {
                    throw AssistantPolicyError(field: "assistant.approvalTimeout",
                                               message: "expected whole seconds from \(bounds.lowerBound) to \(bounds.upperBound)")
                }
                part.approvalTimeout = seconds
            default:
                throw AssistantPolicyError(field: "assistant",
                                           message: "unknown key '\(VisibleText.of(String(field.stringValue.prefix(80))))' (expected tools, fullAccess, reviewer, rememberApprovals, approvalTimeout)")
            }
        }
        assistant = part
    }
}

/// One entry of `"tools"`: a level, or per-command rules (CommandRules).
private enum ToolRule: Decodable {
    case level(String)
    case commands(CommandRules)

    init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) { self = .level(text); return }
        self = .commands(try ToolRuleProbe.rules(decoder))
    }
}

/// Decodes per-command rules, keeping the first problem with its field for the error message.
private struct ToolRuleProbe: Decodable {
    var problem: AssistantPolicyError?

    init(from decoder: any Decoder) throws {
        if (try? decoder.singleValueContainer().decode(String.self)) != nil { return }
        do { _ = try Self.rules(decoder) } catch let e as AssistantPolicyError { problem = e }
    }

    static func rules(_ decoder: any Decoder) throws -> CommandRules {
        try rules(decoder, field: "assistant.tools.\(decoder.codingPath.last?.stringValue ?? "?")", scoped: true)
    }

    /// `scoped`: the tool's own entry, which may hold "hosts" and "tags" (whose entries may not).
    static func rules(_ decoder: any Decoder, field: String, scoped: Bool) throws -> CommandRules {
        guard let object = try? decoder.container(keyedBy: PolicyFileKey.self) else {
            throw AssistantPolicyError(field: field, message: scoped ? "expected \"deny\", \"ask\", \"approve\" or an object of per-command rules"
                                                                  : "expected an object of per-command rules (deny, ask, approve, default)")
        }
        var rules = CommandRules()
        for key in object.allKeys {
            switch key.stringValue {
            case "deny", "ask", "approve":
                guard let texts = try? object.decode([String].self, forKey: key) else {
                    throw AssistantPolicyError(field: "\(field).\(key.stringValue)", message: "expected a list of command patterns (\"systemctl status *\")")
                }
                guard texts.count <= CommandRules.patternCap else {
                    throw AssistantPolicyError(field: "\(field).\(key.stringValue)", message: "more than \(CommandRules.patternCap) patterns")
                }
                var patterns: [[String]] = []
                for text in texts {
                    let words = text.split(separator: " ").map(String.init)
                    guard !words.isEmpty, words.count <= CommandRules.wordCap, VisibleText.isPlain(text) else {
                        throw AssistantPolicyError(field: "\(field).\(key.stringValue)",
                                                   message: "'\(VisibleText.of(String(text.prefix(80))))' is not a pattern (1 to \(CommandRules.wordCap) words of plain text)")
                    }
                    // "*" matches whole words only: "rm*" or "--force=*" would be taken as
                    // meaning more than they match (they match only themselves), so refuse them.
                    if let partial = words.first(where: { $0 != "*" && $0.contains("*") }) {
                        throw AssistantPolicyError(field: "\(field).\(key.stringValue)",
                                                   message: "'\(VisibleText.of(String(text.prefix(80))))': '*' matches a whole word only, not part of '\(VisibleText.of(String(partial.prefix(40))))'")
                    }
                    patterns.append(words)
                }
                switch key.stringValue {
                case "deny": rules.deny = patterns
                case "ask": rules.ask = patterns
                default: rules.approve = patterns
                }
            case "default":
                guard let text = try? object.decode(String.self, forKey: key), let level = PolicyLevel(rawValue: text) else {
                    throw AssistantPolicyError(field: "\(field).default", message: "expected \"deny\", \"ask\" or \"approve\"")
                }
                rules.fallback = level
            case "hosts" where scoped, "tags" where scoped:
                let what = key.stringValue == "hosts" ? "host" : "tag"
                guard let entries = try? object.nestedContainer(keyedBy: PolicyFileKey.self, forKey: key) else {
                    throw AssistantPolicyError(field: "\(field).\(key.stringValue)", message: "expected an object of rules by \(what) name")
                }
                guard entries.allKeys.count <= CommandRules.patternCap else {
                    throw AssistantPolicyError(field: "\(field).\(key.stringValue)", message: "more than \(CommandRules.patternCap) \(what)s")
                }
                var scoped: [String: CommandRules] = [:]
                for name in entries.allKeys {
                    let text = name.stringValue
                    guard !text.isEmpty, text.utf8.count <= 255, VisibleText.isPlain(text), !text.contains(" ") else {
                        throw AssistantPolicyError(field: "\(field).\(key.stringValue)",
                                                   message: "'\(VisibleText.of(String(text.prefix(80))))' is not a \(what) name (1 to 255 bytes of plain text, no spaces)")
                    }
                    scoped[text] = try Self.rules(try entries.superDecoder(forKey: name), field: "\(field).\(key.stringValue).\(text)", scoped: false)
                }
                if key.stringValue == "hosts" { rules.hosts = scoped } else { rules.tags = scoped }
            default:
                throw AssistantPolicyError(field: field, message: "unknown key '\(VisibleText.of(String(key.stringValue.prefix(80))))' "
                                           + (scoped ? "(expected deny, ask, approve, default, hosts, tags)" : "(expected deny, ask, approve, default)"))
            }
        }
        return rules
    }
}

private struct PolicyFileKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Tool names as tools.h has them: `[a-z][a-z0-9_]{0,63}`.
enum ToolName {
    static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, (0x61...0x7a).contains(first), bytes.count <= 64 else { return false }
        return bytes.allSatisfy { (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5f }
    }
}
