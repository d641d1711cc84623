import Foundation
import SyncCore
import Testing

/// Keeping the local side of a conflict in a collection that merges whole records (forwarding
/// rules, in these devices' declarations), when the vault moved on after the conflict was found:
/// three devices, each with its own SQLite store, on one real vault folder.
@Suite struct WholeRecordResolveTests {
    let root = temporaryDirectory("resolve")

    func device(_ name: String) throws -> SyncDevice {
        try SyncDevice(dir: "\(root)/\(name)", folder: "\(root)/vault")
    }

    func put(_ d: SyncDevice, _ text: String) throws {
        try d.db.put(namespace: "org.termhost.forwarding", collection: "rules", key: "fwd", value: Array(text.utf8))
    }

    func rule(_ d: SyncDevice) throws -> String? {
        try d.db.get(namespace: "org.termhost.forwarding", collection: "rules", key: "fwd").map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func keepLocalGoesOnlyOverTheVersionTheConflictShowed() throws {
        let a = try device("a"), b = try device("b"), c = try device("c")
        try put(a, "first")
        for d in [a, b, c] { #expect(d.engine.sync() == .synced) }
        try put(a, "from-a")
        try put(b, "from-b")
        a.engine.sync(); b.engine.sync()
        let found = try b.engine.conflicts()
        #expect(found.map(\.reason) == ["changed on both devices"])
        c.engine.sync()
        try put(c, "from-c")
        c.engine.sync()   // the vault moved on after B saw the conflict
        try b.engine.resolve(try #require(found.first).conflictID, keep: .local)
        #expect(b.engine.sync() == .synced)
        // Not an overwrite of C's version: a conflict against it.
        let again = try b.engine.conflicts()
        #expect(again.map { $0.remote.map { String(decoding: $0, as: UTF8.self) } } == ["from-c"])
        c.engine.sync()
        #expect(try rule(c) == "from-c")
        try b.engine.resolve(try #require(again.first).conflictID, keep: .local)
        for d in [b, a, c] { #expect(d.engine.sync() == .synced) }
        for d in [a, b, c] {
            #expect(try rule(d) == "from-b")
            #expect(try d.engine.conflicts().isEmpty)
        }
    }
}
