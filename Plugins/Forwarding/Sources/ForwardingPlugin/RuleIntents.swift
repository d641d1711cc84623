import Foundation
import TermhostSDK

/// Which rules the user asked to keep running (`forward start`), in the host store: collection
/// "intents" of this plugin's namespace, keyed by rule ID. Never declared syncable: whether a
/// rule runs is this machine's business (another device's start must not open ports here), and
/// only an explicit `forward start` or `forward stop` changes it, never a launch, a sync or the
/// daemon itself. The daemon starts these rules whenever it starts.
struct RuleIntents {
    let store: Store
    static let collection = "intents"

    /// The rule IDs with running intent.
    func all() throws -> Set<String> {
        Set(try store.list(RuleIntents.collection).map(\.key))
    }

    func add(_ rule: ForwardRule) throws {
        try store.put(RuleIntents.collection, rule.id, "{\"since\":\(Int(Date().timeIntervalSince1970))}")
    }

    /// Whether the rule had intent.
    @discardableResult
    func remove(_ id: String) throws -> Bool {
        guard try store.get(RuleIntents.collection, id) != nil else { return false }
        try store.remove(RuleIntents.collection, id)
        return true
    }
}
