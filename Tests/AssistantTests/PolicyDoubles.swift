import AssistantCore
import Synchronization

/// The gate's storage as rows in memory: the pure policy logic is tested here; the plugin's
/// implementation over the host store is tested through `termhost assistant approvals|audit`.
final class MemoryPolicyStorage: PolicyStorage {
    let rows = Mutex([String: [String: String]]())
    let failing: Bool

    init(failing: Bool = false) { self.failing = failing }

    struct Refused: Error, CustomStringConvertible { var description: String { "disk full" } }

    func put(_ collection: String, _ key: String, _ value: String) throws {
        if failing { throw Refused() }
        rows.withLock { $0[collection, default: [:]][key] = value }
    }

    func remove(_ collection: String, _ key: String) throws {
        _ = rows.withLock { $0[collection]?.removeValue(forKey: key) }
    }

    func list(_ collection: String) throws -> [(key: String, value: String)] {
        rows.withLock { ($0[collection] ?? [:]).sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) } }
    }

    /// Every stored value, for "the secret never reaches the store" checks.
    var allText: String { rows.withLock { $0.values.flatMap { $0.values }.joined(separator: "\n") } }
}

/// The person at the terminal, answering from a script and keeping what they were shown.
final class ScriptedPrompter: ApprovalPrompter {
    let answers: Mutex<[ApprovalAnswer]>
    let shown = Mutex([ApprovalRequest]())

    init(_ answers: [ApprovalAnswer]) { self.answers = Mutex(answers) }

    func ask(_ request: ApprovalRequest) -> ApprovalAnswer {
        shown.withLock { $0.append(request) }
        return answers.withLock { $0.isEmpty ? .deny : $0.removeFirst() }
    }

    var requests: [ApprovalRequest] { shown.withLock { $0 } }
}

/// A reviewer with fixed verdicts, counting its calls.
final class ScriptedReviewer: CallReviewer {
    let verdict: ReviewVerdict
    let calls = Mutex(0)

    init(_ verdict: ReviewVerdict) { self.verdict = verdict }

    func review(_ request: ApprovalRequest) -> ReviewVerdict {
        calls.withLock { $0 += 1 }
        return verdict
    }

    var count: Int { calls.withLock { $0 } }
}

extension GateCall {
    static func exec(_ command: String, host: String = "web-2", run: String = "r1") -> GateCall {
        GateCall(runID: run, toolName: "ssh_exec", toolReadOnly: false,
                 argumentsJSON: "{\"host\":\(jsonString(host)),\"command\":\(jsonString(command))}")
    }

    static func tool(_ name: String, readOnly: Bool, host: String = "web-2", modes: Set<RunMode> = Set(RunMode.allCases)) -> GateCall {
        GateCall(runID: "r1", toolName: name, toolReadOnly: readOnly, modes: modes,
                 argumentsJSON: "{\"host\":\(jsonString(host)),\"path\":\"/etc/motd\"}")
    }

    static func jsonString(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where u.value < 0x20: out += "\\u00" + (u.value < 0x10 ? "0" : "") + String(u.value, radix: 16)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}
