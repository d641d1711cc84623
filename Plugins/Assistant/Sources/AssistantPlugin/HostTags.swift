import Foundation
import Synchronization
import TermhostSDK

/// The tags of the saved host a call names, for policies with rules by tag: read through the
/// host's tool catalog with the SSH plugin's `list_hosts` (the SSH plugin owns the hosts; no
/// other plugin reads its store). nil when they cannot be told (no catalog, no SSH feature, an
/// answer that is not a host list, a host beyond the listing): the gate then denies what rules
/// by tag could decide. Tags come from saved hosts, which sync: a device's tags are the ones
/// its owners (and the vault's members) gave.
enum HostTags {
    /// Call numbers of these lookups: far above a run's own (counted from 1), so cancelling a
    /// run's call never reaches one.
    private static let nextCall = Mutex<UInt64>(1 << 62)

    static func of(_ host: String?, tools: HostTools?, scene: UInt64) -> [String]? {
        guard let host else { return [] }
        guard let tools else { return nil }
        let number = nextCall.withLock { n in n += 1; return n }
        guard let json = try? tools.call(tool: "list_hosts", argumentsJSON: "{}", callID: number, scene: scene),
              let listing = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any],
              let hosts = listing["hosts"] as? [[String: Any]] else { return nil }
        guard let entry = hosts.first(where: { $0["id"] as? String == host }) else {
            // Not a saved host (ssh_exec then refuses it): no tags, when the listing is whole.
            return listing["omitted"] as? Int == 0 ? [] : nil
        }
        if entry["tags"] is NSNull { return [] }
        return entry["tags"] as? [String]
    }
}
