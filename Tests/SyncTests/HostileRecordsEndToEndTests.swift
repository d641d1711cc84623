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
}
