// fuzz-sources: Plugins/Sync/Sources/SyncCore/FolderSegment.swift Plugins/Sync/Sources/SyncCore/FolderVault.swift Plugins/Sync/Sources/SyncCore/FolderBackend.swift Plugins/Sync/Sources/SyncCore/VaultDirectory.swift Plugins/Sync/Sources/SyncCore/FolderVaultLocation.swift Plugins/Sync/Sources/SyncCore/SyncBackend.swift
// What a vault folder's peers (or a broken replicator) can write, on any bytes: a journal
// segment (with a secret's ID or an oversize field in a record), a version token, a cursor, a
// snapshot file name and a vault folder's path (through links: /proc/self/root, /dev/fd). An accepted segment has the
// stored device and index, a Lamport stamp in range and entries whose parents are versions;
// an accepted segment is the same after encoding and parsing again; nothing traps.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let segment = try? FolderSegment.parse(bytes, device: "dev", index: 1) {
        precondition(segment.device == "dev" && segment.index == 1)
        precondition((1...FolderSegment.maxLamport).contains(segment.lamport))
        precondition(segment.entries.allSatisfy { $0.problem == nil && $0.parents.allSatisfy { FolderVersion($0) != nil } })
        let again = try? FolderSegment.parse(try! FolderBackend.encode(segment), device: "dev", index: 1)
        precondition(again == segment, "a parsed segment did not survive encoding")
        var vault = FolderVault()
        vault.apply([segment])
        for id in vault.heads.keys { precondition(vault.record(id) != nil) }
        // History holds every version of a record once, and its newest is the record's winner.
        for (id, versions) in vault.versions(of: nil) {
            precondition(Set(versions.map(\.change)).count == versions.count, "a change listed twice")
            precondition(zip(versions, versions.dropFirst()).allSatisfy { $0.version < $1.version })
            precondition(versions.last.map { SyncVersion($0.version.token) } == vault.record(id)?.version, "the newest version is not the current one")
        }
    }
    let text = String(decoding: bytes, as: UTF8.self)
    if let version = FolderVersion(text) {
        precondition(FolderVersion(version.token) == version, "a version token did not round-trip: \(text)")
        precondition(FolderVersion.isDeviceID(version.device))
    }
    if let vector = FolderBackend.decodeCursor(SyncCursor(text)) {
        precondition(FolderBackend.decodeCursor(FolderBackend.encodeCursor(vector)) == vector)
    }
    if let index = FolderBackend.segmentIndex(text) { precondition(index > 0) }
    // A vault folder's path, as a peer's config or a planted link could make it: whatever it
    // is, an accepted one is absolute and never the root or a system directory.
    if FolderVaultLocation.refusal(text) == nil {
        precondition(FolderVaultLocation.isAbsolute(text), "a relative vault folder was accepted: \(text)")
        let top = FolderVaultLocation.normalized(text)
        precondition(top != "/" && !["/etc", "/usr", "/proc", "/dev"].contains(where: { top == $0 || top.hasPrefix($0 + "/") }),
                     "a system directory was accepted as a vault folder: \(text)")
    }
    _ = FolderBackend.snapshotOrder(text)
    return 0
}
