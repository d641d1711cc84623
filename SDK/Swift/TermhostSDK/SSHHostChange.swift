import Foundation

/// The SSH plugin's `org.termhost.ssh.host.changed` event: a saved host's route (address, port,
/// user, identity, key, jump hosts, agent forwarding) was changed or removed by another device,
/// published after the new record is in the store. Plugins that hold runtime state built from
/// the host (a forward, a monitor, a transfer) retire it, then reconnect with the new record or
/// stay stopped when it was removed. Payload: `{"host":NAME,"reason":TEXT,"deleted":BOOL}`.
public struct SSHHostChange: Sendable, Equatable {
    /// The topic the SSH plugin publishes.
    public static let topic = "org.termhost.ssh.host.changed"

    /// The saved host's name.
    public var host: String
    /// Why, for a user: "host 'web' was changed on another device (sync)".
    public var reason: String
    /// True when the host no longer exists.
    public var deleted: Bool

    public init(host: String, reason: String, deleted: Bool) {
        self.host = host
        self.reason = reason
        self.deleted = deleted
    }

    /// The event's payload as the SSH plugin publishes it.
    public var json: String {
        "{\"host\":\(JSONText.quoted(host)),\"reason\":\(JSONText.quoted(reason)),\"deleted\":\(deleted)}"
    }

    /// Longest host name or reason accepted from a payload, in UTF-8 bytes.
    public static let maximumTextBytes = 4096

    /// The payload, or nil when it is not the documented object (non-empty `host`, at most
    /// `maximumTextBytes` each). Foundation and `JSONText` only, for the fuzz target.
    public init?(json: String) {
        struct Wire: Decodable { var host: String; var reason: String; var deleted: Bool }
        guard json.utf8.count <= 2 * Self.maximumTextBytes + 256,
              let wire = try? JSONDecoder().decode(Wire.self, from: Data(json.utf8)),
              !wire.host.isEmpty, wire.host.utf8.count <= Self.maximumTextBytes, wire.reason.utf8.count <= Self.maximumTextBytes
        else { return nil }
        self.init(host: wire.host, reason: wire.reason, deleted: wire.deleted)
    }
}
