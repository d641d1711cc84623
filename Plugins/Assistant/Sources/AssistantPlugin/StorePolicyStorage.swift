import AssistantCore
import TermhostSDK

/// Remembered approvals and the audit log in the host store (termhost.store/1), in the
/// assistant's namespace, beside its runs.
struct StorePolicyStorage: PolicyStorage {
    let store: Store

    func put(_ collection: String, _ key: String, _ value: String) throws {
        try store.put(collection, key, value)
    }

    func remove(_ collection: String, _ key: String) throws {
        try store.remove(collection, key)
    }

    func list(_ collection: String) throws -> [(key: String, value: String)] {
        try store.list(collection).map { (key: $0.key, value: String(decoding: $0.value, as: UTF8.self)) }.sorted { $0.key < $1.key }
    }
}
