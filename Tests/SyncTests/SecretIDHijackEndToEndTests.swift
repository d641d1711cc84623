import Foundation
import SyncCore
import Testing
import TestSupport

/// A hostile peer of a shared folder vault publishes an identity naming this device's secret
/// ID as its key and its password, and a host at the attacker's server that uses it. The
/// device, on the real binary, refuses the identity at sync (quarantined, named in `sync
/// status`), and a connection to the planted host sends the attacker's server nothing of the
/// device's: no key offered, no password. The attacker's server is a real sshd that logs every
/// key offered (with its fingerprint) and every password tried.
@Suite struct SecretIDHijackEndToEndTests {
    let shared = TemporaryDirectory()
    var plugins: String { shared.sub("plugins") }
    var vault: String { shared.sub("vault") }

    init() throws {
        try TermhostDevice.syncPlugins(in: shared.sub("plugins"))
    }


    /// The ID of the one secret the SSH plugin stored on `d`.
    func storedSecretID(_ d: TermhostDevice) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: d.env["XDG_DATA_HOME"]! + "/termhost/secrets.json"))
        let all = try #require(try JSONSerialization.jsonObject(with: data) as? [String: [String: Any]])
        let ids = all.values.flatMap { $0.keys }
        #expect(ids.count == 1, "\(ids)")
        return try #require(ids.first)
    }

    @Test func aPlantedSecretIDIsRefusedAndTheAttackersHostGetsNothing() throws {
        defer { shared.remove() }
        let attacker = try SSHServer(in: shared, authorizedKeys: [], extraConfig: "PasswordAuthentication yes\n")
        defer { attacker.stop() }
        let key = try UserKey(in: shared.sub("keys"), name: "deploy")
        let fingerprint = try Shell.run("/usr/bin/ssh-keygen", ["-l", "-f", key.privatePath + ".pub"]).stdout
            .split(separator: " ").dropFirst().first.map(String.init) ?? "?"
        #expect(fingerprint.hasPrefix("SHA256:"))

        let device = TermhostDevice(plugins: plugins)
        // The worst case: the device already trusts the attacker's host key (a host it once
        // used, or "accept" on a prompt), so only what it sends decides.
        let ssh = device.dir.sub("home/.ssh")
        #expect(FileManager.default.createFile(atPath: ssh + "/known_hosts", contents: Data((attacker.knownHostsLine + "\n").utf8)))
        let added = try device.runWithoutAgent("identities", "add", "deploy", "--user", NSUserName(), "--store-key", key.privatePath)
        #expect(added.status == 0, "\(added.output)")
        let set = try device.runWithoutAgent("sync", "backend", "set", "folder", vault, "--create")
        #expect(set.status == 0, "\(set.output)")
        #expect(try device.runWithoutAgent("sync", "now").status == 0)
        let secretID = try storedSecretID(device)

        // The peer writes into the vault as any member can: well-formed records, hostile fields.
        let peer = FolderBackend(root: vault)
        _ = try peer.open(device: "peer-device")
        let identity = #"{"name":"ops","user":"\#(NSUserName())","keySecret":"\#(secretID)","passwordSecret":"\#(secretID)"}"#
        let host = #"{"name":"trap","address":"127.0.0.1","port":\#(attacker.port),"identity":"ops"}"#
        let results = try peer.push([
            SyncChange(changeID: "c1", id: SyncRecordID(namespace: "org.termhost.ssh", collection: "identities", key: "ops"), base: nil, payload: Array(identity.utf8)),
            SyncChange(changeID: "c2", id: SyncRecordID(namespace: "org.termhost.ssh", collection: "hosts", key: "trap"), base: nil, payload: Array(host.utf8)),
        ], device: "peer-device")
        #expect(results.count == 2)
        peer.close()

        let synced = try device.runWithoutAgent("sync", "now")
        #expect(synced.status == 0, "\(synced.output)")
        let status = try device.runWithoutAgent("sync", "status").stdout
        #expect(status.contains("quarantined: 1 record(s)"), "\(status)")
        #expect(status.contains("org.termhost.ssh/identities/ops") && status.contains("carries keySecret, passwordSecret"), "\(status)")

        let exec = try device.runWithoutAgent("exec", "trap", "--", "true")
        #expect(exec.status != 0, "\(exec.output)")
        let log = attacker.log
        #expect(!log.contains(fingerprint), "the attacker's server was offered the device's key:\n\(log)")
        #expect(!log.contains("Failed password") && !log.contains("Accepted"), "the attacker's server got a password:\n\(log)")
        // The device's own identity still works as stored: its key is still its key.
        #expect(try device.runWithoutAgent("identities", "list").stdout.contains("deploy"))

        // The peer overwrites the device's own identity the same way. Refused too, and the
        // device's next edit replaces the hostile copy in the vault instead of conflicting
        // with it forever: a new device gets the honest one.
        let again = FolderBackend(root: vault)
        _ = try again.open(device: "peer-device")
        var cursor = SyncCursor.start, current: SyncVersion?
        while true {
            let page = try again.pull(after: cursor, limit: 1000)
            if let v = page.records.first(where: { $0.id.key == "deploy" })?.version { current = v }
            cursor = page.next
            if !page.more { break }
        }
        guard let base = current else { Issue.record("the vault has no 'deploy'"); return }
        let planted = #"{"name":"deploy","user":"\#(NSUserName())","keySecret":"\#(secretID)","passwordSecret":"\#(secretID)"}"#
        let over = try again.push([SyncChange(changeID: "c3", id: SyncRecordID(namespace: "org.termhost.ssh", collection: "identities", key: "deploy"),
                                              base: base, payload: Array(planted.utf8))], device: "peer-device")
        #expect(over.count == 1)
        again.close()
        #expect(try device.runWithoutAgent("sync", "now").status == 0)
        #expect(try device.runWithoutAgent("sync", "status").stdout.contains("quarantined: 2 record(s)"))
        #expect(try device.runWithoutAgent("identities", "edit", "deploy", "--user", "honest").status == 0)
        let sent = try device.runWithoutAgent("sync", "now")
        #expect(sent.status == 0, "\(sent.output)")
        #expect(try device.runWithoutAgent("sync", "status").stdout.contains("pending changes: 0\n"))
        let fresh = TermhostDevice(plugins: plugins)
        #expect(try fresh.runWithoutAgent("sync", "backend", "set", "folder", vault).status == 0)
        #expect(try fresh.runWithoutAgent("sync", "now").status == 0)
        #expect(try fresh.runWithoutAgent("identities", "list").stdout.contains("user honest"), "the honest edit replaced the hostile copy")
    }
}
