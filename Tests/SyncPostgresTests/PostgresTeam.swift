import Foundation
import SyncCore
import SyncPostgres
import TestSupport

/// A real PostgreSQL server with a `termhost` database and a team vault "team": the superuser
/// created it (and ran the migrations), alice owns it, bob and carol edit it, each with their
/// own login role and password. Devices are backends, one per (user, device ID).
final class PostgresTeam {
    let dir = TemporaryDirectory("termhost-pg")
    let server: PostgresServer
    static let database = "termhost"
    static let members = ["alice": "Alice-Pw-1", "bob": "Bob-Pw-1", "carol": "Carol-Pw-1", "dave": "Dave-Pw-1"]
    /// The built sync plugins that command-line devices load, when asked for (`syncPlugins`).
    var plugins: String { dir.path + "/plugins" }

    init(syncPlugins: Bool = false) throws {
        if syncPlugins { try TermhostDevice.syncPlugins(in: dir.sub("plugins")) }
        server = try PostgresServer(in: dir)
        try server.createDatabase(PostgresTeam.database)
        for (name, password) in PostgresTeam.members.sorted(by: { $0.key < $1.key }) { try server.createRole(name, password: password) }
        let admin = backend(user: PostgresServer.adminUser, device: "admin-console")
        _ = try admin.open(device: "admin-console")
        try admin.setMember(role: "alice", access: .owner)
        try admin.setMember(role: "bob", access: .editor)
        try admin.setMember(role: "carol", access: .editor)
        admin.close()
    }

    func settings(user: String, vault: String = "team") -> PostgresSettings {
        PostgresSettings(host: server.socketDirectory, port: PostgresServer.port, database: PostgresTeam.database, user: user, vault: vault)
    }

    func backend(user: String, device: String, vault: String = "team", password: String? = nil) -> PostgresBackend {
        let pw = password ?? (user == PostgresServer.adminUser ? PostgresServer.adminPassword : PostgresTeam.members[user])
        return PostgresBackend(settings: settings(user: user, vault: vault), password: pw)
    }

    /// An opened device.
    func device(_ user: String, _ device: String) throws -> PostgresBackend {
        let b = backend(user: user, device: device)
        _ = try b.open(device: device)
        return b
    }

    /// A device of member `user` on the vault "team", set up through the command line (the team
    /// made with `syncPlugins`); `policy` is the device's operator policy file, if any.
    func memberDevice(_ user: String, extra: [String: String] = [:], policy: String? = nil) throws -> TermhostDevice {
        let d = TermhostDevice(plugins: plugins, extra: extra)
        if let policy { _ = d.dir.write("policy.json", policy) }
        try d.setPostgresBackend(["host=\(server.socketDirectory)", "dbname=\(PostgresTeam.database)", "user=\(user)", "vault=team"],
                                 password: PostgresTeam.members[user]!)
        return d
    }

    func remove() {
        server.stop()
        dir.remove()
    }
}

/// Helpers to keep the tests about behaviour.
extension SyncChange {
    static func put(_ id: SyncRecordID, _ text: String, base: SyncVersion? = nil, changeID: String = UUID().uuidString) -> SyncChange {
        SyncChange(changeID: changeID, id: id, base: base, payload: Array(text.utf8))
    }

    static func delete(_ id: SyncRecordID, base: SyncVersion?, changeID: String = UUID().uuidString) -> SyncChange {
        SyncChange(changeID: changeID, id: id, base: base, payload: nil)
    }
}

extension SyncPushResult {
    var appliedVersion: SyncVersion? {
        if case .applied(let v) = self { return v }
        return nil
    }

    var conflictRecord: SyncServerRecord? {
        if case .conflict(let r) = self { return r }
        return nil
    }
}

extension PostgresBackend {
    /// Everything after `cursor`, page by page.
    func pullAll(after cursor: SyncCursor = .start, limit: Int = 100) throws(SyncBackendError) -> (records: [SyncServerRecord], damaged: [SyncDamage], cursor: SyncCursor) {
        var records: [SyncServerRecord] = [], damaged: [SyncDamage] = [], cursor = cursor
        while true {
            let page = try pull(after: cursor, limit: limit)
            records += page.records
            damaged += page.damaged
            cursor = page.next
            if !page.more { return (records, damaged, cursor) }
        }
    }
}
