import Foundation

/// What a vault folder holds, rebuilt from its files: the newest snapshot, then every journal
/// segment after it, applied in version order.
///
/// Design: each device appends only to its own directory, so two devices never write the same
/// file and a replicator (Syncthing, a network share) never has to merge one. A write names the
/// versions it replaces (`parents`); a record's current state is its set of heads, the writes
/// nobody has replaced yet. One head is the normal case. Two heads mean two devices wrote
/// without seeing each other: the highest version wins (Lamport stamp, then device ID), the
/// others are reported as displaced, and the device that wrote a displaced one merges or lists a
/// conflict. Every device computes the same heads and the same winner from the same files, in
/// any order of arrival, without reading a clock.
struct FolderVault {
    struct Head: Equatable {
        let version: FolderVersion
        let change: String
        let payload: [UInt8]?
    }

    /// A purge snapshot: `snapshots/<lamport>.<device>.json`, the heads of every live record as
    /// of the segments it covers (tombstones dropped: that is the purge).
    struct Snapshot: Codable {
        struct Record: Codable {
            var namespace: String
            var collection: String
            var key: String
            var heads: [SnapshotHead]
        }
        struct SnapshotHead: Codable {
            var version: String
            var change: String
            var payload: String?
        }
        var format: Int
        var lamport: Int64
        var covers: [String: Int64]
        var lastChange: [String: String]
        var records: [Record]
    }

    var heads: [SyncRecordID: [Head]] = [:]
    var versionOfChange: [String: FolderVersion] = [:]
    var lastChange: [String: (FolderVersion, String)] = [:]
    var maxLamport: Int64 = 0
    /// Highest segment index read per device, and what the snapshot covers.
    var vector: [String: Int64] = [:]
    var covers: [String: Int64] = [:]
    var snapshotLamport: Int64 = 0
    /// Which records each segment touched: (device, index) -> IDs.
    var touched: [String: [Int64: Set<SyncRecordID>]] = [:]
    var damaged: [(device: String, index: Int64, damage: SyncDamage)] = []
    /// What `history` reads: the snapshot's heads and the segments applied after it (their
    /// payloads are shared with `heads`, not copied).
    var snapshotHeads: [SyncRecordID: [Head]] = [:]
    var segments: [FolderSegment] = []

    mutating func load(snapshot: Snapshot) {
        covers = snapshot.covers
        vector = snapshot.covers
        snapshotLamport = snapshot.lamport
        maxLamport = snapshot.lamport
        for (device, change) in snapshot.lastChange {
            lastChange[device] = (FolderVersion(lamport: snapshot.lamport, device: device, index: 1, entry: 0), change)
        }
        for record in snapshot.records {
            let id = SyncRecordID(namespace: record.namespace, collection: record.collection, key: record.key)
            heads[id] = record.heads.compactMap { h in
                FolderVersion(h.version).map { v in
                    Head(version: v, change: h.change, payload: h.payload.flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) })
                }
            }
            for h in heads[id] ?? [] { versionOfChange[h.change] = h.version }
        }
        snapshotHeads = heads
    }

    /// Applies segments (any order given; sorted here by version so parents come first).
    mutating func apply(_ segments: [FolderSegment]) {
        self.segments += segments
        var entries: [(FolderVersion, FolderSegment.Entry)] = []
        for s in segments {
            vector[s.device] = max(vector[s.device] ?? 0, s.index)
            maxLamport = max(maxLamport, s.lamport)
            for (n, e) in s.entries.enumerated() {
                entries.append((s.version(of: n), e))
                touched[s.device, default: [:]][s.index, default: []].insert(e.id)
            }
        }
        for (version, entry) in entries.sorted(by: { $0.0 < $1.0 }) {
            if versionOfChange[entry.change] != nil { continue }   // a change is applied once
            let parents = Set(entry.parents)
            var current = heads[entry.id] ?? []
            // Only what was written before: a write's parents were read before it, so they
            // are ordered below it. A segment naming a later version (hostile, or broken) must
            // not hide the newest write, which is the record's winner and its current version.
            current.removeAll { parents.contains($0.version.token) && $0.version < version }
            current.append(Head(version: version, change: entry.change, payload: entry.bytes))
            heads[entry.id] = current
            versionOfChange[entry.change] = version
            if let last = lastChange[version.device], last.0 > version { continue }
            lastChange[version.device] = (version, entry.change)
        }
    }

    /// Every version the folder holds of `wanted` (of every record when nil), oldest first per
    /// record: the snapshot's heads (a purge kept only those), then the writes of the segments
    /// after it that were applied, each change once, in version order.
    func versions(of wanted: SyncRecordID?) -> [SyncRecordID: [Head]] {
        var out: [SyncRecordID: [Head]] = [:]
        var seen = Set<String>()
        for (id, hs) in snapshotHeads where wanted == nil || id == wanted {
            out[id] = hs.sorted { $0.version < $1.version }
            seen.formUnion(hs.map(\.change))
        }
        var later: [(FolderVersion, FolderSegment.Entry)] = []
        for s in segments {
            for (n, e) in s.entries.enumerated() where wanted == nil || e.id == wanted { later.append((s.version(of: n), e)) }
        }
        // Exactly the writes `apply` took: a change is applied once, at the version it was
        // first applied at, whichever record a later copy of its ID (hostile, or replayed) names.
        for (version, entry) in later.sorted(by: { $0.0 < $1.0 })
        where versionOfChange[entry.change] == version && seen.insert(entry.change).inserted {
            out[entry.id, default: []].append(Head(version: version, change: entry.change, payload: entry.bytes))
        }
        return out
    }

    func record(_ id: SyncRecordID) -> SyncServerRecord? {
        guard let all = heads[id], let winner = all.max(by: { $0.version < $1.version }) else { return nil }
        let displaced = all.filter { $0.version != winner.version }.sorted { $0.version < $1.version }.map {
            SyncDisplacedWrite(version: SyncVersion($0.version.token), changeID: $0.change, device: $0.version.device, payload: $0.payload)
        }
        return SyncServerRecord(id: id, version: SyncVersion(winner.version.token), payload: winner.payload,
                                changeID: winner.change, device: winner.version.device, displaced: displaced)
    }

    /// The snapshot that purges tombstones up to `covers`: live records keep all their heads.
    func snapshot(covering covers: [String: Int64], lamport: Int64) -> Snapshot {
        let records = heads.keys.sorted().compactMap { id -> Snapshot.Record? in
            guard let hs = heads[id], hs.contains(where: { $0.payload != nil }) else { return nil }
            return Snapshot.Record(namespace: id.namespace, collection: id.collection, key: id.key, heads: hs.map {
                Snapshot.SnapshotHead(version: $0.version.token, change: $0.change, payload: $0.payload.map { Data($0).base64EncodedString() })
            })
        }
        return Snapshot(format: FolderSegment.currentFormat, lamport: lamport, covers: covers,
                        lastChange: lastChange.mapValues { $0.1 }, records: records)
    }
}
