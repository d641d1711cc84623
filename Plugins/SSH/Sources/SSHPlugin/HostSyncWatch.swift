import Foundation
import TermhostSDK

/// Retires what another device's change to a saved host or identity made stale, after the sync
/// provider wrote it (SyncApplyingWatch): this process's sessions to that host end with the
/// reason, and `org.termhost.ssh.host.changed` (SSHHostChange) tells the plugins that built
/// forwards, monitors or transfers on it. Only a change of the route counts: the fields that
/// decide where and as whom a connection goes (`HostRoute`); a tag or a keepalive does not.
/// A host that reaches its destination through a changed jump host, or logs in with a changed
/// identity, is changed too.
final class HostSyncWatch: Sendable {
    private let watch: SyncApplyingWatch?

    init(host: PluginHost) {
        watch = try? SyncApplyingWatch(host: host, namespace: "org.termhost.ssh", collections: ["hosts", "identities"]) { change in
            guard let store = host.store else { return }
            for affected in Self.affected(by: change, vault: Vault(store: store)) {
                let closed = OpenSessions.retire(host: affected.host, reason: affected.reason)
                host.log(.info, "\(VisibleText.of(affected.reason)); \(closed) session(s) closed")
                try? host.events?.publish(SSHHostChange.topic, json: affected.json)
            }
        }
    }

    func cancel() { watch?.cancel() }

    /// The hosts whose route this change alters, each with the reason a user reads.
    static func affected(by change: SyncAppliedChange, vault: Vault) -> [SSHHostChange] {
        let name = change.record.key
        let shown = VisibleText.of(name)
        let removed = change.after == nil
        let what = removed ? "removed" : "changed"
        let others = (try? vault.all()) ?? []
        switch change.record.collection {
        case "hosts":
            guard HostRoute(change.before) != HostRoute(change.after) else { return [] }
            let through = others.filter { $0.name != name && ($0.jump ?? []).contains(name) }.map {
                SSHHostChange(host: $0.name, reason: "host '\(VisibleText.of($0.name))' goes through jump host '\(shown)', which was \(what) on another device (sync)", deleted: false)
            }
            return [SSHHostChange(host: name, reason: "host '\(shown)' was \(what) on another device (sync)", deleted: removed)] + through
        case "identities":
            guard IdentityRoute(change.before) != IdentityRoute(change.after) else { return [] }
            return others.filter { $0.identity == name }.map {
                SSHHostChange(host: $0.name, reason: "host '\(VisibleText.of($0.name))' logs in as identity '\(shown)', which was \(what) on another device (sync)", deleted: false)
            }
        default:
            return []
        }
    }
}

/// What of a saved host decides where and as whom a connection goes. A record that does not
/// decode (or is absent) is nil: different from any readable one.
struct HostRoute: Equatable {
    var address: String, port: Int, user: String?, identityFile: String?, jump: [String]?, identity: String?, forwardAgent: Bool?
    var certificateFile: String?, hostKeyAlias: String?, moreIdentityFiles: [String]?

    init?(_ bytes: [UInt8]?) {
        guard let bytes, let r = try? JSONDecoder().decode(HostRecord.self, from: Data(bytes)) else { return nil }
        (address, port, user, identityFile, jump, identity, forwardAgent) = (r.address, r.port, r.user, r.identityFile, r.jump, r.identity, r.forwardAgent)
        (certificateFile, hostKeyAlias, moreIdentityFiles) = (r.certificateFile, r.hostKeyAlias, r.moreIdentityFiles)
    }
}

/// What of a saved identity decides how a connection logs in.
struct IdentityRoute: Equatable {
    var user: String?, keyFile: String?, passwordSecret: String?, keySecret: String?

    init?(_ bytes: [UInt8]?) {
        guard let bytes, let r = try? JSONDecoder().decode(IdentityRecord.self, from: Data(bytes)) else { return nil }
        (user, keyFile, passwordSecret, keySecret) = (r.user, r.keyFile, r.passwordSecret, r.keySecret)
    }
}
