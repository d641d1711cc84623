import Foundation
import TermhostSDK

/// Rules in the host store: collection "rules" of this plugin's namespace, one JSON value per
/// rule keyed by its ID. Each save or removal is its own transaction.
struct RuleStore {
    let store: Store
    static let collection = "rules"

    func all() throws -> [ForwardRule] {
        try store.list(RuleStore.collection).compactMap { try? JSONDecoder().decode(ForwardRule.self, from: Data($0.value)) }
            .sorted { $0.name.localizedStandardCompare($1.name) == .orderedAscending }
    }

    /// Keys of stored values that are not a rule this version can read (another version or a
    /// damaged store wrote them). They are left as they are, never removed; `list` names them.
    func unreadable() throws -> [String] {
        try store.list(RuleStore.collection).filter { (try? JSONDecoder().decode(ForwardRule.self, from: Data($0.value))) == nil }
            .map(\.key)
    }

    /// The rule called name (exactly), or a clear error naming it.
    func find(_ name: String) throws -> ForwardRule {
        guard let rule = try all().first(where: { $0.name == name }) else {
            throw ForwardError("termhost forward: no rule named '\(name)' (see 'termhost forward list')")
        }
        return rule
    }

    /// Saves rule; names are unique so that commands can refer to rules by name.
    func save(_ rule: ForwardRule) throws {
        if let clash = try all().first(where: { $0.name == rule.name && $0.id != rule.id }) {
            throw ForwardError("termhost forward: a rule named '\(clash.name)' already exists (\(clash.host) \(clash.sshArgument))")
        }
        let data = try JSONEncoder().encode(rule)
        try store.put(RuleStore.collection, rule.id, Array(data))
    }

    func remove(_ rule: ForwardRule) throws { try store.remove(RuleStore.collection, rule.id) }
}
