import Foundation

/// The user's settings synced from the user's other devices: the host's own `settings`
/// collection in the store (namespace `termhost`, which no plugin ID can be), one record per
/// feature ID holding a JSON object of key → value, merged field by field by the sync provider.
/// A user layer below the user config file, obeying `userOverridable` as the file does. Its
/// records arrive from other devices through the vault, so each is checked here: one that is not
/// a valid feature ID with a JSON object is reported (naming it) and ignored, never fatal.
public struct SyncedSettings: Sendable, Equatable {
    public static let namespace = "termhost"
    public static let collection = "settings"
    public static let source = "synced user settings"

    public var settings: [String: [String: JSONValue]]
    /// Records that were ignored, with the reason.
    public var rejected: [RegistryError]

    public init(settings: [String: [String: JSONValue]] = [:], rejected: [RegistryError] = []) {
        self.settings = settings
        self.rejected = rejected
    }

    /// The records of the collection (key: feature ID, value: JSON object bytes).
    public static func decode(_ records: [(key: String, value: [UInt8])]) -> SyncedSettings {
        var out = SyncedSettings()
        for record in records.sorted(by: { $0.key < $1.key }) {
            guard FeatureID.isValid(record.key) else {
                out.rejected.append(.invalidDocument(file: source, field: record.key, detail: RegistryError.invalidID(record.key).description + "; ignored"))
                continue
            }
            do {
                out.settings[record.key] = try JSONDocument.decode([String: JSONValue].self, from: Data(record.value), file: source)
            } catch {
                out.rejected.append(.invalidDocument(file: source, field: record.key, detail: "not a JSON object of settings (\(error)); ignored"))
            }
        }
        return out
    }

    /// The record of one feature after setting (value non-nil) or removing one key; nil when
    /// no key is left (the record is removed).
    public static func record(_ current: [String: JSONValue], setting key: String, to value: JSONValue?) -> [UInt8]? {
        var object = current
        object[key] = value
        return object.isEmpty ? nil : Array(JSONValue.object(object).description.utf8)
    }
}
