import Foundation

/// One file of a device's append-only journal in a vault folder:
/// `devices/<device>/<index, 12 digits>.json`, written once (atomically, never replaced) by that
/// device. Its entries share one Lamport stamp, one more than the highest stamp the writer had
/// read in the folder, so a write made after seeing another is always ordered after it, whatever
/// the devices' clocks say.
struct FolderSegment: Codable, Equatable {
    struct Entry: Codable, Equatable {
        var change: String
        var namespace: String
        var collection: String
        var key: String
        /// The versions this write replaces: the record's heads when it was written.
        var parents: [String]
        /// Base64 of the record's bytes; nil for a tombstone.
        var payload: String?
    }

    var format: Int
    var device: String
    var index: Int64
    var lamport: Int64
    var entries: [Entry]

    static let currentFormat = 1
    /// Beyond this a stamp could overflow when incremented; no honest folder gets near it.
    static let maxLamport: Int64 = 1 << 52
    static let maxIndex: Int64 = 999_999_999_999

    /// Parses a segment read from `location` (whose name gave `device` and `index`). Anything a
    /// writer of this format would not produce is an error naming what is wrong; the bytes are
    /// untrusted (a peer or a broken sync tool may have written them).
    static func parse(_ bytes: [UInt8], device: String, index: Int64) throws(FolderFormatError) -> FolderSegment {
        let segment: FolderSegment
        do {
            segment = try JSONDecoder().decode(FolderSegment.self, from: Data(bytes))
        } catch {
            throw FolderFormatError("not a journal segment: \(FolderFormatError.describe(error))")
        }
        guard segment.format == currentFormat else {
            throw FolderFormatError("journal format \(segment.format) is not \(currentFormat) (written by another Termhost version)")
        }
        guard segment.device == device, segment.index == index else {
            throw FolderFormatError("names device \(segment.device.debugDescription) index \(segment.index) but is stored as \(device) index \(index)")
        }
        guard (1...maxLamport).contains(segment.lamport) else {
            throw FolderFormatError("Lamport stamp \(segment.lamport) is out of range 1...\(maxLamport)")
        }
        for (n, entry) in segment.entries.enumerated() {
            if let reason = entry.problem { throw FolderFormatError("entry \(n): \(reason)") }
        }
        return segment
    }

    func version(of entry: Int) -> FolderVersion {
        FolderVersion(lamport: lamport, device: device, index: index, entry: entry)
    }
}

extension FolderSegment.Entry {
    var id: SyncRecordID { SyncRecordID(namespace: namespace, collection: collection, key: key) }

    var bytes: [UInt8]? { payload.flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) } }

    var problem: String? {
        if change.isEmpty || change.utf8.count > 128 { return "change ID must be 1-128 bytes" }
        if namespace.isEmpty || collection.isEmpty || key.isEmpty { return "empty namespace, collection or key" }
        if parents.contains(where: { FolderVersion($0) == nil }) { return "a parent is not a version" }
        if let payload, Data(base64Encoded: payload) == nil { return "payload is not base64" }
        return nil
    }
}

/// A version in a vault folder: `<lamport>.<device>.<index>.<entry>`. Ordered by Lamport stamp,
/// then device ID, then position: a total order every device computes the same way from the
/// same files, independent of when each file arrived and of any clock.
struct FolderVersion: Hashable, Comparable {
    let lamport: Int64
    let device: String
    let index: Int64
    let entry: Int

    init(lamport: Int64, device: String, index: Int64, entry: Int) {
        self.lamport = lamport
        self.device = device
        self.index = index
        self.entry = entry
    }

    init?(_ token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, let l = Int64(parts[0]), let i = Int64(parts[2]), let e = Int(parts[3]),
              l > 0, i > 0, e >= 0, FolderVersion.isDeviceID(parts[1]) else { return nil }
        self.init(lamport: l, device: String(parts[1]), index: i, entry: e)
    }

    var token: String { "\(lamport).\(device).\(index).\(entry)" }

    static func < (a: FolderVersion, b: FolderVersion) -> Bool {
        (a.lamport, a.device, a.index, a.entry) < (b.lamport, b.device, b.index, b.entry)
    }

    /// Device IDs name directories: 1-64 of [A-Za-z0-9_-], so never ".", "..", "/" or a dot.
    static func isDeviceID<S: StringProtocol>(_ s: S) -> Bool {
        !s.isEmpty && s.utf8.count <= 64 && s.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c == 0x2d || c == 0x5f
        }
    }
}

struct FolderFormatError: Error, Equatable {
    let reason: String
    init(_ reason: String) { self.reason = reason }

    static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let c): return c.debugDescription
        case DecodingError.keyNotFound(let k, _): return "missing \(k.stringValue)"
        case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c):
            return "wrong type at \(c.codingPath.map(\.stringValue).joined(separator: "."))"
        default: return "\(error)"
        }
    }
}
