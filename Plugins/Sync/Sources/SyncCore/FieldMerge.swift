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

    /// `remote` with the device-local fields of `local` put back.
    static func keepLocal(_ remote: [UInt8], from local: [UInt8]?, _ localFields: [String]) -> [UInt8] {
        guard !localFields.isEmpty, var r = object(remote), let local, let l = object(local) else { return remote }
        for f in localFields { r[f] = l[f] }
        return encode(r)
    }

    /// Three-way merge of JSON objects: a field changed on one side only takes that side's
    /// value; changed on both to different values is a conflict (nil, with the field names).
    static func merge(base: [UInt8]?, local: [UInt8], remote: [UInt8]) -> Result<[UInt8], MergeConflict> {
        guard let l = object(local), let r = object(remote) else { return .failure(MergeConflict(fields: ["(not JSON objects)"])) }
        let b = base.flatMap(object) ?? [:]
        var merged: [String: Any] = [:]
        var clashes: [String] = []
        for key in Set(l.keys).union(r.keys).union(b.keys).sorted() {
            let (bv, lv, rv) = (canonical(b[key]), canonical(l[key]), canonical(r[key]))
            let pick: Any?
            if lv == bv { pick = r[key] } else if rv == bv || rv == lv { pick = l[key] } else { clashes.append(key); continue }
            if let pick { merged[key] = pick }
        }
        return clashes.isEmpty ? .success(encode(merged)) : .failure(MergeConflict(fields: clashes))
    }

    struct MergeConflict: Error { let fields: [String] }
}
