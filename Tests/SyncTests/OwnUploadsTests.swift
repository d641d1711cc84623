import Foundation
import SyncCore
import SyncTestSupport
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
        let between = HookBeforePush(FolderBackend(root: folder, create: true))
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
