import Foundation

/// Where remembered approvals and the audit log persist: one collection per kind, string keys
/// and JSON text values. The plugin implements it over the host store (the SDK's `Store`), so
/// both live in the SQLite store beside the assistant's history, in its namespace.
public protocol PolicyStorage: Sendable {
    func put(_ collection: String, _ key: String, _ value: String) throws
    func remove(_ collection: String, _ key: String) throws
    /// Every row of the collection, sorted by key.
    func list(_ collection: String) throws -> [(key: String, value: String)]
}

/// Reads the string and number fields of one stored JSON object; nil for anything else.
enum StoredObject {
    static func fields(_ json: String) -> [String: Any]? {
        guard let data = json.data(using: .utf8) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }
}
