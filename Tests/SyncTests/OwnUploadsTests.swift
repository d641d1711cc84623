import Foundation
import SyncCore
import Testing

/// A device does not read its own uploads back: after a sync pushed its changes, the next sync
/// pulls none of them, yet a change another device committed meanwhile (between this device's
/// pull and its push) is still pulled.
@Suite struct OwnUploadsTests {
    let root = temporaryDirectory("own-uploads")
    var folder: String { "\(root)/vault" }

    @Test func theSyncAfterAnUploadPullsNoneOfIt() throws {
        let a = try SyncDevice(dir: "\(root)/a", folder: folder)
        for i in 0..<100 { try a.putHost("h\(i)", #"{"address":"h\#(i).example.com"}"#) }
        #expect(a.engine.sync() == .synced)
        #expect(a.engine.sync() == .synced)
        #expect(a.engine.recordsPulled == 0)
        for i in 0..<100 { try a.putHost("h\(i)", #"{"address":"h\#(i).example.org"}"#) }
        #expect(a.engine.sync() == .synced)
        #expect(a.engine.sync() == .synced)
        #expect(a.engine.recordsPulled == 0)
        #expect(try a.engine.status().pending == 0)
    }

    @Test func aChangeAnotherDeviceCommittedBetweenPullAndPushIsStillPulled() throws {
        let b = try SyncDevice(dir: "\(root)/b", folder: folder)
        try b.putHost("from-b", #"{"address":"b1"}"#)
        #expect(b.engine.sync() == .synced)
        let between = BeforeEachPush(FolderBackend(root: folder))
        let a = try SyncDevice(dir: "\(root)/a", folder: folder, backend: between)
        #expect(a.engine.sync() == .synced)
        between.hook = {
            try? b.putHost("from-b", #"{"address":"b2"}"#)
            _ = b.engine.sync()
        }
        for i in 0..<100 { try a.putHost("h\(i)", #"{"address":"h\#(i)"}"#) }
        #expect(a.engine.sync() == .synced)
        between.hook = nil
        #expect(a.engine.sync() == .synced)
        #expect(a.engine.recordsPulled == 1)
        #expect(try a.host("from-b")?["address"] as? String == "b2")
    }
}

/// The real backend, with `hook` run before each push: another device writes at the worst moment.
final class BeforeEachPush: SyncBackend {
    let inner: SyncBackend
    var hook: (() -> Void)?
    init(_ inner: SyncBackend) { self.inner = inner }
    var summary: String { inner.summary }
    func open(device: String) throws(SyncBackendError) -> SyncVaultInfo { try inner.open(device: device) }
    func pull(after cursor: SyncCursor, limit: Int) throws(SyncBackendError) -> SyncPage { try inner.pull(after: cursor, limit: limit) }
    func push(_ changes: [SyncChange], device: String) throws(SyncBackendError) -> [SyncPushResult] {
        hook?()
        return try inner.push(changes, device: device)
    }
    func cursor(_ cursor: SyncCursor, skippingOwn versions: [SyncVersion], device: String) -> SyncCursor {
        inner.cursor(cursor, skippingOwn: versions, device: device)
    }
    func lastChangeID(device: String) throws(SyncBackendError) -> String? { try inner.lastChangeID(device: device) }
    func acknowledge(device: String, cursor: SyncCursor) throws(SyncBackendError) { try inner.acknowledge(device: device, cursor: cursor) }
    func purgeTombstones(force: Bool) throws(SyncBackendError) -> Int { try inner.purgeTombstones(force: force) }
    func waitForChanges(after cursor: SyncCursor, seconds: Double) -> Bool { false }
    func close() { inner.close() }
}
