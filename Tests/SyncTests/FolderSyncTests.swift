import Foundation
import SyncCore
import SyncTestSupport
import TermhostServices
import Testing

/// Two and three devices, each with its own SQLite store, syncing through one real vault folder.
@Suite struct FolderSyncTests {
    let root = temporaryDirectory("folder")
    var folder: String { "\(root)/vault" }

    func device(_ name: String, folder: String? = nil, clock: @escaping () -> Double = { Date().timeIntervalSince1970 }) throws -> SyncDevice {
        try SyncDevice(dir: "\(root)/\(name)", folder: folder ?? self.folder, clock: clock)
    }

    @Test func anEditOnOneDeviceReachesTheOther() throws {
        let a = try device("a"), b = try device("b")
        try a.putHost("web", #"{"address":"web.example.com","port":22}"#)
        #expect(a.engine.sync() == .synced)
        #expect(b.engine.sync() == .synced)
        #expect(try b.host("web")?["address"] as? String == "web.example.com")
        #expect(try b.engine.status().pending == 0)
    }

    @Test func concurrentEditsOfDifferentFieldsBothSurvive() throws {
        let a = try device("a"), b = try device("b")
        try a.putHost("web", #"{"address":"web","port":22,"user":"root"}"#)
        a.engine.sync(); b.engine.sync()
        try a.putHost("web", #"{"address":"web","port":2222,"user":"root"}"#)
        try b.putHost("web", #"{"address":"web","port":22,"user":"deploy"}"#)
        a.engine.sync(); b.engine.sync(); a.engine.sync()
        for d in [a, b] {
            #expect(try d.host("web")?["port"] as? Int == 2222)
            #expect(try d.host("web")?["user"] as? String == "deploy")
            #expect(try d.engine.conflicts().isEmpty)
        }
    }

    /// Each device's edit meets the owner's rule alone, the field-by-field merge of the two
    /// does not (a rule across fields): the merge is never applied, the record is a conflict
    /// naming the rule, and keeping the local side over the other's fields is refused too.
    @Test func aMergeThatBreaksTheOwnersRuleIsAConflict() throws {
        let a = try device("a"), b = try device("b")
        let rule: (SyncRecordID, [UInt8]) -> String? = { _, payload in
            let o = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any]
            return o?["jump"] != nil && o?["proxy"] != nil ? "jump and proxy may not both be set" : nil
        }
        a.refuse = rule
        b.refuse = rule
        try a.putHost("web", #"{"address":"web","port":22}"#)
        a.engine.sync(); b.engine.sync()
        try a.putHost("web", #"{"address":"web","port":22,"jump":"bastion"}"#)
        try b.putHost("web", #"{"address":"web","port":22,"proxy":"socks"}"#)
        #expect(a.engine.sync() == .synced)
        #expect(b.engine.sync() == .synced)
        #expect(try b.host("web")?["jump"] == nil && b.host("web")?["proxy"] as? String == "socks")
        let conflicts = try b.engine.conflicts()
        #expect(conflicts.map(\.reason) == ["the two devices' changes together break a rule of org.termhost.ssh: jump and proxy may not both be set"])
        #expect(throws: (any Error).self) { try b.engine.resolve(conflicts[0].conflictID, keep: .local) }
        try b.engine.resolve(conflicts[0].conflictID, keep: .remote)
        #expect(try b.host("web")?["jump"] as? String == "bastion" && b.host("web")?["proxy"] == nil)
    }

    @Test func theSameFieldEditedTwiceIsAConflictTheUserResolves() throws {
        let a = try device("a"), b = try device("b")
        try a.putHost("web", #"{"address":"web","port":22}"#)
        a.engine.sync(); b.engine.sync()
        try a.putHost("web", #"{"address":"web","port":2200}"#)
        try b.putHost("web", #"{"address":"web","port":2201}"#)
        a.engine.sync(); b.engine.sync()
        let conflicts = try b.engine.conflicts()
        #expect(conflicts.count == 1)
        #expect(conflicts.first?.reason == "both devices changed port")
        #expect(try b.host("web")?["port"] as? Int == 2201)   // nothing silently dropped
        try b.engine.resolve(conflicts[0].conflictID, keep: .local)
        b.engine.sync(); a.engine.sync()
        #expect(try a.host("web")?["port"] as? Int == 2201)
        #expect(try b.engine.conflicts().isEmpty)
    }

    @Test func writesMadeWithoutSeeingEachOtherConvergeAfterReplication() throws {
        // Two copies of the folder, as Syncthing keeps them, each written while apart.
        let f1 = "\(root)/f1", f2 = "\(root)/f2"
        let a = try device("a", folder: f1), b = try device("b", folder: f2)
        try a.putHost("web", #"{"address":"web","port":22,"user":"root"}"#)
        a.engine.sync()
        try replicate(f1, f2)
        b.engine.sync()
        try a.putHost("web", #"{"address":"web","port":2222,"user":"root"}"#)
        try b.putHost("web", #"{"address":"web","port":22,"user":"deploy"}"#)
        a.engine.sync(); b.engine.sync()          // both accepted: neither folder saw the other
        try replicate(f1, f2); try replicate(f2, f1)
        a.engine.sync(); b.engine.sync()          // the displaced writer merges
        try replicate(f1, f2); try replicate(f2, f1)
        a.engine.sync(); b.engine.sync()
        for d in [a, b] {
            #expect(try d.host("web")?["port"] as? Int == 2222)
            #expect(try d.host("web")?["user"] as? String == "deploy")
        }
    }

    @Test func aDeleteAgainstAnEditIsAConflictNotALoss() throws {
        let a = try device("a"), b = try device("b")
        try a.putHost("db", #"{"address":"db"}"#)
        a.engine.sync(); b.engine.sync()
        try a.deleteHost("db")
        try b.putHost("db", #"{"address":"db2"}"#)
        a.engine.sync(); b.engine.sync()
        #expect(try b.engine.conflicts().map(\.reason) == ["changed here, deleted on another device"])
        #expect(try b.host("db")?["address"] as? String == "db2")
    }

    @Test func aDeviceOfflineWhileOthersPurgeDoesNotResurrectTheDelete() throws {
        let a = try device("a"), b = try device("b"), c = try device("c")
        try a.putHost("old", #"{"address":"old"}"#)
        try a.putHost("keep", #"{"address":"keep"}"#)
        a.engine.sync(); b.engine.sync(); c.engine.sync()
        try a.deleteHost("old")
        a.engine.sync(); b.engine.sync()
        #expect(try FolderBackend(root: folder, create: true).purgeTombstones(force: false) == 0)   // c has not seen it
        #expect(try FolderBackend(root: folder, create: true).purgeTombstones(force: true) == 1)
        #expect(c.engine.sync() == .synced)
        #expect(try c.host("old") == nil)
        #expect(try c.host("keep") != nil)
        a.engine.sync()
        #expect(try a.host("old") == nil)
    }

    @Test func aLostAcknowledgementIsNeitherLostNorAppliedTwice() throws {
        let lossy = LosesAcknowledgements(FolderBackend(root: folder, create: true))
        let a = try SyncDevice(dir: "\(root)/a", folder: folder, backend: lossy)
        try a.putHost("web", #"{"address":"web"}"#)
        guard case .failed = a.engine.sync() else { Issue.record("the lost acknowledgement was not seen"); return }
        #expect(try a.engine.status().pending == 1)
        lossy.losing = false
        #expect(a.engine.sync() == .synced)
        #expect(try a.engine.status().pending == 0)
        let segments = try FileManager.default.contentsOfDirectory(atPath: "\(folder)/devices/\(a.engine.device)").filter { $0.hasSuffix("1.json") || $0.hasSuffix("2.json") }
        #expect(segments == ["000000000001.json"])
    }

    @Test func orderDoesNotDependOnDeviceClocks() throws {
        let days: Double = 5 * 86_400
        let a = try device("a", clock: { Date().timeIntervalSince1970 + days })
        let b = try device("b", clock: { Date().timeIntervalSince1970 - days })
        try a.putHost("r", #"{"address":"from-a"}"#)
        a.engine.sync(); b.engine.sync()
        try b.putHost("r", #"{"address":"from-b"}"#)   // later in fact, days earlier by its clock
        b.engine.sync(); a.engine.sync()
        #expect(try a.host("r")?["address"] as? String == "from-b")
        #expect(try a.engine.status().lastSuccess! - b.engine.status().lastSuccess! > days)
    }

    @Test func aCorruptedRecordIsQuarantinedWithTheReason() throws {
        let a = try device("a"), b = try device("b")
        try a.putHost("web", #"{"address":"web"}"#)
        a.engine.sync()
        let bad = "\(folder)/devices/\(a.engine.device)/000000000002.json"
        try Data("{\"format\":1,\"garbage".utf8).write(to: URL(fileURLWithPath: bad))
        #expect(b.engine.sync() == .synced)
        #expect(try b.host("web") != nil)
        let q = try b.engine.quarantined()
        #expect(q.count == 1)
        #expect(q.first?.location == bad)
        #expect(q.first?.reason.hasPrefix("not a journal segment") == true)
        #expect(FileManager.default.fileExists(atPath: bad))   // kept
    }

    @Test func deviceLocalFieldsNeverLeaveTheDevice() throws {
        let a = try device("a"), b = try device("b")
        try a.putHost("web", #"{"address":"web","lastUsed":"a-local-2026"}"#)
        a.engine.sync(); b.engine.sync()
        #expect(try b.host("web")?["lastUsed"] == nil)
        #expect(try !folderBytes().contains("a-local-2026"))
    }

    @Test func aRecordTypeFromANewerClientIsKeptNotApplied() throws {
        let newer = SyncDevice.collections + [SyncCollection(namespace: "org.termhost.snippets", collection: "snippets", merge: .record)]
        let a = try SyncDevice(dir: "\(root)/a", folder: folder, collections: newer)
        let b = try device("b")
        try a.db.put(namespace: "org.termhost.snippets", collection: "snippets", key: "s1", value: Array("uptime".utf8))
        a.engine.sync()
        #expect(b.engine.sync() == .synced)
        #expect(try b.db.get(namespace: "org.termhost.snippets", collection: "snippets", key: "s1") == nil)
        #expect(try b.get("foreign", #"["org.termhost.snippets","snippets","s1"]"#) != nil)
    }

    @Test func aStoreRestoredFromAnOldBackupDoesNotApplyPeersDeletesBlindly() throws {
        var a = try device("a")
        let b = try device("b")
        try a.putHost("x", #"{"address":"x"}"#)
        a.engine.sync(); b.engine.sync()
        a.db = try SQLiteStore(path: "\(root)/unused-\(UUID().uuidString).db")   // release the file
        try FileManager.default.copyItem(atPath: "\(root)/a/termhost.db", toPath: "\(root)/backup.db")
        a = try device("a")
        try a.putHost("y", #"{"address":"y"}"#)
        a.engine.sync()
        try b.deleteHost("x")
        b.engine.sync()
        a.db = try SQLiteStore(path: "\(root)/unused-\(UUID().uuidString).db")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: "\(root)/a/termhost.db\(suffix)") }
        try FileManager.default.copyItem(atPath: "\(root)/backup.db", toPath: "\(root)/a/termhost.db")
        a = try device("a")
        #expect(a.engine.sync() == .synced)
        #expect(try a.host("x") != nil)
        #expect(try a.engine.conflicts().map(\.reason) == ["deleted on another device after the backup this store was restored from"])
    }

    private func folderBytes() throws -> String {
        var all = ""
        let e = FileManager.default.enumerator(atPath: folder)
        while let name = e?.nextObject() as? String {
            if let d = FileManager.default.contents(atPath: "\(folder)/\(name)") {
                all += String(decoding: d, as: UTF8.self)
                all += (Data(base64Encoded: String(decoding: d, as: UTF8.self)).map { String(decoding: $0, as: UTF8.self) } ?? "")
            }
        }
        // Payloads are base64 inside the JSON: decode every base64-looking string too.
        let pattern = try NSRegularExpression(pattern: #""payload":"([A-Za-z0-9+/=]+)""#)
        for m in pattern.matches(in: all, range: NSRange(all.startIndex..., in: all)) {
            if let r = Range(m.range(at: 1), in: all), let d = Data(base64Encoded: String(all[r])) { all += String(decoding: d, as: UTF8.self) }
        }
        return all
    }

    /// Copies files one way, as a replicator would (files only appear whole).
    private func replicate(_ from: String, _ to: String) throws {
        let e = FileManager.default.enumerator(atPath: from)
        while let name = e?.nextObject() as? String {
            var isDir: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: "\(from)/\(name)", isDirectory: &isDir)
            if isDir.boolValue { try FileManager.default.createDirectory(atPath: "\(to)/\(name)", withIntermediateDirectories: true); continue }
            if !FileManager.default.fileExists(atPath: "\(to)/\(name)") && !name.hasSuffix("ack.json") {
                try FileManager.default.copyItem(atPath: "\(from)/\(name)", toPath: "\(to)/\(name)")
            }
        }
    }
}

/// The real folder backend, but the answer to a push is lost after the push took effect (a
/// crash or a dropped connection between the backend's commit and the engine's bookkeeping).
final class LosesAcknowledgements: ForwardingBackend {
    var losing = true

    override func push(_ changes: [SyncChange], device: String) throws(SyncBackendError) -> [SyncPushResult] {
        let results = try inner.push(changes, device: device)
        if losing { throw .unavailable("connection lost before the answer") }
        return results
    }
}
