import Foundation

/// JSON object handling for `SyncMergeRule.fields` and for device-local fields.
enum FieldMerge {
    static func object(_ bytes: [UInt8]) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
    }

    static func encode(_ object: [String: Any]) -> [UInt8] {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { [UInt8]($0) } ?? []
    }

    /// A canonical text of one JSON value, for comparing values of any type.
    static func canonical(_ value: Any?) -> String? {
        guard let value else { return nil }
        return (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]))
            .map { String(decoding: $0, as: UTF8.self) }
    }

    /// The record without its device-local fields (unchanged when there are none or it is not
    /// a JSON object).
    static func strip(_ bytes: [UInt8]?, _ localFields: [String]) -> [UInt8]? {
        guard let bytes, !localFields.isEmpty, var o = object(bytes) else { return bytes }
        for f in localFields { o.removeValue(forKey: f) }
        return encode(o)
    }

    /// `remote` with its device-local fields replaced by those of `local` (or dropped, when
    /// there is no local copy): a device-local field from elsewhere (the ID of a secret in
    /// another device's secrets file, or of this device's, planted by a peer) never lands here.
    static func keepLocal(_ remote: [UInt8], from local: [UInt8]?, _ localFields: [String]) -> [UInt8] {
        guard !localFields.isEmpty, var r = object(remote) else { return remote }
        let l = local.flatMap(object) ?? [:]
        for f in localFields { r[f] = l[f] }
        return encode(r)
    }

    /// The device-local fields `bytes` carries, sorted: none in a record any device sent,
    /// since each strips them before sending.
    static func carriedLocalFields(_ bytes: [UInt8], _ localFields: [String]) -> [String] {
        guard !localFields.isEmpty, let o = object(bytes) else { return [] }
        return localFields.filter { o[$0] != nil }.sorted()
    }

    /// Three-way merge of JSON objects: a field changed on one side only takes that side's
    /// value; changed on both to different values is a conflict (nil, with the field names).
    static func merge(base: [UInt8]?, local: [UInt8], remote: [UInt8]) -> Result<[UInt8], MergeConflict> {
        guard let (merged, clashes) = fieldwise(base: base, local: local, remote: remote) else {
            return .failure(MergeConflict(fields: ["(not JSON objects)"]))
        }
        return clashes.isEmpty ? .success(encode(merged)) : .failure(MergeConflict(fields: clashes))
    }

    /// The same merge, but a field changed on both sides takes the local value: what keeping the
    /// local side of a conflict means (the remote side's other changes survive). Nil when either
    /// side is not a JSON object.
    static func mergeKeepingLocal(base: [UInt8]?, local: [UInt8], remote: [UInt8]) -> [UInt8]? {
        fieldwise(base: base, local: local, remote: remote).map { encode($0.merged) }
    }

    /// The merged object, clashing fields holding the local value, and the names of those fields.
    private static func fieldwise(base: [UInt8]?, local: [UInt8], remote: [UInt8]) -> (merged: [String: Any], clashes: [String])? {
        guard let l = object(local), let r = object(remote) else { return nil }
        let b = base.flatMap(object) ?? [:]
        var merged: [String: Any] = [:]
        var clashes: [String] = []
        for key in Set(l.keys).union(r.keys).union(b.keys).sorted() {
            let (bv, lv, rv) = (canonical(b[key]), canonical(l[key]), canonical(r[key]))
            let pick: Any?
            if lv == bv { pick = r[key] } else if rv == bv || rv == lv { pick = l[key] } else { clashes.append(key); pick = l[key] }
            if let pick { merged[key] = pick }
        }
        return (merged, clashes)
    }

    struct MergeConflict: Error { let fields: [String] }
}
