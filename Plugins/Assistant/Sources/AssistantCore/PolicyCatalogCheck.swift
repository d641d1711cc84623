#if canImport(TermhostSDK)
import TermhostSDK
#endif

/// What a policy's tool rules mean against the tools that exist. A file is parsed without the
/// catalog (`AssistantPolicyPart.parse`); once the catalog is known, a rule naming no tool of it
/// makes the policy unusable, as an unknown value does: a misspelt `"ssh_exe": "deny"` would
/// otherwise deny nothing, and the run went on to make the write the operator meant to stop.
extension AssistantPolicy {
    /// The first rule (operator's file first) for a tool the catalog does not have, as the error
    /// that fails the policy closed, with the nearest real name when one is close.
    public func unknownTool(in catalog: Set<String>) -> AssistantPolicyError? {
        for part in [operatorPart, userPart] {
            for tool in part.tools.keys.sorted() where tool != "*" && !catalog.contains(tool) {
                let shown = VisibleText.of(tool)
                let near = catalog.map { ($0, Self.distance($0, tool)) }.filter { $0.1 <= 2 }.min { ($0.1, $0.0) < ($1.1, $1.0) }
                let hint = near.map { " (did you mean '\($0.0)'?)" } ?? ""
                return AssistantPolicyError(field: "assistant.tools.\(shown)",
                    message: "\(part.source): assistant.tools.\(shown): no tool '\(shown)' in the catalog\(hint); a rule for a tool that does not exist applies to nothing, so the policy is refused until it is fixed (tools: \(catalog.sorted().joined(separator: ", ")))")
            }
        }
        return nil
    }

    /// A deny of one tool undercut by an approve of another that reaches the same hosts
    /// (`ssh_exec: deny` with `sftp_write: approve`): one warning per pair. `hostTools` are
    /// the tools that take a saved host.
    public func undercutDenies(hostTools: Set<String>) -> [String] {
        let tools = hostTools.sorted()
        var out: [String] = []
        for denied in tools {
            let d = rule(for: denied, readOnly: false)
            guard d.isExplicit, d.level == .deny else { continue }
            for other in tools where other != denied {
                let a = rule(for: other, readOnly: false)
                guard a.isExplicit, a.level == .approve else { continue }
                out.append("'\(denied)' is denied (\(d.origin)) but '\(other)' is approved (\(a.origin)), and it reaches the same hosts: a deny of one tool does not stop another")
            }
        }
        return out
    }

    /// Levenshtein distance, for the "did you mean" of a misspelt tool name (names are short).
    static func distance(_ a: String, _ b: String) -> Int {
        let x = Array(a.unicodeScalars), y = Array(b.unicodeScalars)
        guard !x.isEmpty else { return y.count }
        guard !y.isEmpty else { return x.count }
        var previous = Array(0...y.count)
        for i in 1...x.count {
            var current = [i] + Array(repeating: 0, count: y.count)
            for j in 1...y.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[y.count]
    }
}
