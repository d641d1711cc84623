import Testing
import TermhostSDK

/// The generation-token table behind the transport's and the files service's handles: a handle
/// used after close must find nothing, never another object.
@Suite struct HandleTableTests {
    final class Thing: Sendable {
        let name: String
        init(_ name: String) { self.name = name }
    }

    @Test func aRemovedHandleFindsNothingEvenAfterNewInserts() {
        let table = HandleTable<Thing>()
        let first = table.insert(Thing("first"))
        #expect(table.lookup(first)?.name == "first")
        #expect(table.remove(first)?.name == "first")
        #expect(table.lookup(first) == nil)
        #expect(table.remove(first) == nil, "a second close gets nothing")
        let second = table.insert(Thing("second"))
        #expect(second != first, "a token is never given out twice")
        #expect(table.lookup(first) == nil)
        #expect(table.lookup(second)?.name == "second")
    }

    @Test func tokensAreNeverReused() {
        let table = HandleTable<Thing>()
        var seen = Set<UInt>()
        for i in 0..<1000 {
            let handle = table.insert(Thing("\(i)"))
            #expect(seen.insert(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(handle)))).inserted)
            if i % 2 == 0 { _ = table.remove(handle) }
        }
        #expect(table.removeAll().count == 500)
    }

    @Test func nullAndStrayHandlesFindNothing() {
        let table = HandleTable<Thing>()
        _ = table.insert(Thing("kept"))
        #expect(table.lookup(nil) == nil)
        #expect(table.remove(nil) == nil)
        #expect(table.lookup(OpaquePointer(bitPattern: 0xdead_beef)) == nil)
    }

    @Test func removeAllTakesOnlyWhatMatches() {
        let table = HandleTable<Thing>()
        let a = table.insert(Thing("a")), b = table.insert(Thing("b")), c = table.insert(Thing("a"))
        let gone = table.removeAll { $0.name == "a" }
        #expect(gone.map(\.name) == ["a", "a"])
        #expect(table.lookup(a) == nil && table.lookup(c) == nil)
        #expect(table.lookup(b)?.name == "b")
    }

    @Test func concurrentInsertsGetDistinctTokens() async {
        let table = HandleTable<Thing>()
        let tokens = await withTaskGroup(of: [UInt].self) { group in
            for t in 0..<8 {
                group.addTask {
                    (0..<200).map { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(table.insert(Thing("\(t).\($0)"))))) }
                }
            }
            return await group.reduce(into: [UInt]()) { $0 += $1 }
        }
        #expect(Set(tokens).count == 1600)
        #expect(table.removeAll().count == 1600)
    }
}
