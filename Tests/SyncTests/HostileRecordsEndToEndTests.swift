import Foundation
import SyncCore
import Testing
import TestSupport

/// Records a hostile peer writes into a shared folder vault that no local command could make,
/// on the real binary: a 2 MiB record, keys "..", "" and one with escape sequences. Each is
/// refused before it is decoded and quarantined with why, shown with its control characters
/// made visible; the peer's sound record still arrives, and the store does not grow by the
/// refused bytes.
@Suite struct HostileRecordsEndToEndTests {
    let shared = TemporaryDirectory()
    var plugins: String { shared.sub("plugins") }
    var vault: String { shared.path + "/vault" }

    init() throws {
        try TermhostDevice.syncPlugins(in: shared.sub("plugins"))
    }

    @Test func recordsNoCommandCouldMakeAreQuarantinedUnreadAndTheRestArrives() throws {
        defer { shared.remove() }
        let device = TermhostDevice(plugins: plugins)
        #expect(try device.run("sync", "backend", "set", "folder", vault, "--create").status == 0)
        #expect(try device.run("sync", "now").status == 0)

        func host(_ key: String, _ json: String, _ change: String) -> SyncChange {
            SyncChange(changeID: change, id: SyncRecordID(namespace: "org.termhost.ssh", collection: "hosts", key: key), base: nil, payload: Array(json.utf8))
        }
        let huge = #"{"name":"big","address":"\#(String(repeating: "a", count: 2 << 20))","port":22}"#
        let peer = FolderBackend(root: vault)
        _ = try peer.open(device: "peer-device")
        _ = try peer.push([
            host("big", huge, "c1"),
            host("..", #"{"name":"..","address":"example.com","port":22}"#, "c2"),
            host("esc\u{1b}]0;owned\u{07}", #"{"name":"esc","address":"example.com","port":22}"#, "c3"),
            host("ok", #"{"name":"ok","address":"ok.example.com","port":22}"#, "c4"),
        ], device: "peer-device")
        peer.close()

        let synced = try device.run("sync", "now")
        #expect(synced.status == 0, "\(synced.output)")
        let list = try device.run("hosts", "list").stdout
        #expect(list.contains("ok.example.com"), "\(list)")
        #expect(!list.contains("big") && !list.contains("..") && !list.contains("esc"), "\(list)")
        let status = try device.run("sync", "status").stdout
        #expect(status.contains("quarantined: 3 record(s)"), "\(status)")
        #expect(status.contains("is \(huge.utf8.count) bytes, more than the 1048576 a record may hold: refused unread"), "\(status)")
        #expect(status.contains(#"has the key "..", which names nothing"#), "\(status)")
        #expect(status.contains("has a key with control characters"), "\(status)")
        #expect(!status.contains("\u{1b}") && !status.contains("\u{07}"), "control characters reach the terminal: \(status)")
        // The refused bytes were not kept: the store stays far below the 2 MiB record.
        let db = device.env["XDG_DATA_HOME"]! + "/termhost/termhost.db"
        let size = ((try? FileManager.default.attributesOfItem(atPath: db)[.size] as? Int) ?? 0)
            + ((try? FileManager.default.attributesOfItem(atPath: db + "-wal")[.size] as? Int) ?? 0)
        #expect(size < 1 << 20, "the store holds \(size) bytes")
    }

    /// Records that pass the vault's own limits but break their owners' rules (what `hosts add`,
    /// `identities add`, `forward add` and `metrics add` check, through each plugin's sync check,
    /// ABI 1.4): a key that is not the record's name (two `web` lines), a port of 2^63, an address
    /// read as an option, an escape in an address, a rule's port of 70000, a monitor's interval of
    /// 0, a user with shell characters. Each is quarantined with the rule that failed and never
    /// reaches a store; the sound record arrives.
    @Test func recordsBreakingTheirOwnersRulesAreQuarantinedWithTheRule() throws {
        defer { shared.remove() }
        _ = try Fixtures.bundle("libMetricsPlugin.so", as: "org.termhost.metrics", in: plugins)
        let device = TermhostDevice(plugins: plugins)
        #expect(try device.run("sync", "backend", "set", "folder", vault, "--create").status == 0)
        #expect(try device.run("hosts", "add", "web", "web.example.com").status == 0)
        #expect(try device.run("sync", "now").status == 0)

        func record(_ ns: String, _ collection: String, _ key: String, _ json: String, _ change: String) -> SyncChange {
            SyncChange(changeID: change, id: SyncRecordID(namespace: ns, collection: collection, key: key), base: nil, payload: Array(json.utf8))
        }
        let ssh = "org.termhost.ssh"
        let peer = FolderBackend(root: vault)
        _ = try peer.open(device: "peer-device")
        _ = try peer.push([
            record(ssh, "hosts", "web2", #"{"name":"web","address":"evil.example.com","port":22}"#, "c1"),
            record(ssh, "hosts", "big-port", #"{"name":"big-port","address":"example.com","port":9223372036854775808}"#, "c2"),
            record(ssh, "hosts", "opt", #"{"name":"opt","address":"-oProxyCommand=x","port":22}"#, "c3"),
            record(ssh, "hosts", "esc", #"{"name":"esc","address":"a\u001b]0;owned\u0007","port":22}"#, "c4"),
            record(ssh, "identities", "deploy", #"{"name":"deploy","user":"$(reboot)"}"#, "c5"),
            record("org.termhost.forwarding", "rules", "r1",
                   #"{"id":"r1","name":"db","host":"web","kind":"local","bindPort":70000,"targetHost":"localhost","targetPort":5432}"#, "c6"),
            record("org.termhost.metrics", "monitors", "web", #"{"host":"web","order":1,"paused":false,"interval":0}"#, "c7"),
            record(ssh, "hosts", "ok", #"{"name":"ok","address":"ok.example.com","port":22}"#, "c8"),
        ], device: "peer-device")
        peer.close()

        let synced = try device.run("sync", "now")
        #expect(synced.status == 0, "\(synced.output)")
        let list = try device.run("hosts", "list").stdout
        #expect(list.contains("ok.example.com") && list.contains("web.example.com"), "\(list)")
        #expect(!list.contains("evil") && !list.contains("big-port") && !list.contains("ProxyCommand") && !list.contains("esc"), "\(list)")
        #expect(list.split(separator: "\n").filter { $0.hasPrefix("web ") || $0.hasPrefix("web\t") }.count <= 1, "\(list)")
        #expect(try device.run("identities", "list").stdout.contains("deploy") == false)
        #expect(try device.run("forward", "list").stdout.contains("db") == false)
        #expect(try device.run("metrics", "list").stdout.contains("web") == false)
        let status = try device.run("sync", "status").stdout
        #expect(status.contains("quarantined: 7 record(s)"), "\(status)")
        #expect(status.contains("breaks a rule of org.termhost.ssh: its name 'web' is not its key 'web2'"), "\(status)")
        #expect(status.contains("not a saved host: the record is not valid (not JSON, or a number out of range)"), "\(status)")
        #expect(status.contains("address: an address may not begin with '-'"), "\(status)")
        #expect(status.contains("address: an address may not contain control characters"), "\(status)")
        #expect(status.contains("user: a user name may not contain '$'"), "\(status)")
        #expect(status.contains("breaks a rule of org.termhost.forwarding:") && status.contains("70000"), "\(status)")
        #expect(status.contains("breaks a rule of org.termhost.metrics: interval"), "\(status)")
        #expect(!status.contains("\u{1b}") && !status.contains("\u{07}"), "control characters reach the terminal: \(status)")
    }
}
