import Foundation

/// The payload of `termhost.sync.applying`: which record another device's version replaces.
/// Decoded with `init?(json:)`, which refuses anything but the documented object. Foundation
/// only, so the fuzz target compiles this file as it is.
public struct SyncApplying: Sendable, Equatable {
    /// The owner plugin's store namespace (its plugin ID).
    public var namespace: String
    public var collection: String
    public var key: String
    /// True when the remote version is a deletion.
    public var deleted: Bool

    public init(namespace: String, collection: String, key: String, deleted: Bool) {
        self.namespace = namespace
        self.collection = collection
        self.key = key
        self.deleted = deleted
    }

    /// Longest namespace, collection or key accepted from the payload, in UTF-8 bytes.
    public static let maximumNameBytes = 4096

    /// The event's payload, or nil when it is not a JSON object with string `namespace`,
    /// `collection` and `key` (non-empty, at most `maximumNameBytes`) and a boolean `deleted`.
    public init?(json: String) {
        struct Wire: Decodable { var namespace: String; var collection: String; var key: String; var deleted: Bool }
        guard json.utf8.count <= 4 * Self.maximumNameBytes + 256,
              let wire = try? JSONDecoder().decode(Wire.self, from: Data(json.utf8)) else { return nil }
        for name in [wire.namespace, wire.collection, wire.key] where name.isEmpty || name.utf8.count > Self.maximumNameBytes {
            return nil
        }
        self.init(namespace: wire.namespace, collection: wire.collection, key: wire.key, deleted: wire.deleted)
    }
}
