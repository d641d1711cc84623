import CTermhost

extension termhost_host_sync_store_t: TermhostSizedStruct {}

/// How a syncable collection merges (`termhost_sync_merge`).
public enum SyncMerge: Int32, Sendable {
    /// `TERMHOST_SYNC_MERGE_RECORD`: the whole record; concurrent edits are a conflict.
    case record = 1
    /// `TERMHOST_SYNC_MERGE_FIELDS`: JSON objects merged field by field.
    case fields = 2
}

extension Store {
    /// Marks `collection` of this plugin syncable (`declare_syncable`, ABI 1.3). `localFields`
    /// are top-level JSON fields that never leave the device (they need `.fields`).
    /// Returns false when the host is older than ABI 1.3 (nothing syncs then); throws when the
    /// host refuses the declaration. Call it from init().
    @discardableResult
    public func declareSyncable(_ collection: String, merge: SyncMerge, localFields: [String] = []) throws(PluginError) -> Bool {
        guard let declare = TermhostStruct.member(vtable, \.declare_syncable) else { return false }
        try check { declare(host, collection, merge.rawValue, localFields.joined(separator: ","), $0) }
        return true
    }
}

/// An owner's check of another device's version of a record (`termhost_sync_check`), kept
/// for the process: the host calls it from the sync provider's threads.
final class SyncCheckBox: Sendable {
    let check: @Sendable (_ key: String, _ value: [UInt8]) -> String?
    init(_ check: @escaping @Sendable (String, [UInt8]) -> String?) { self.check = check }

    static let trampoline: termhost_sync_check = { user, _, key, value, size, reason, reasonSize in
        guard let user, let key, let reason, reasonSize > 0 else { return 1 }
        let box = Unmanaged<SyncCheckBox>.fromOpaque(user).takeUnretainedValue()
        let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
        guard let why = box.check(String(cString: key), bytes) else { return 0 }
        // Cut at a character boundary, leaving room for the NUL.
        var text = Array(why.utf8)
        if text.count > reasonSize - 1 {
            text = Array(text.prefix(reasonSize - 1))
            while let last = text.last, last & 0xC0 == 0x80 { text.removeLast() }
            if let last = text.last, last >= 0xC0 { text.removeLast() }
        }
        for (i, b) in text.enumerated() { reason[i] = CChar(bitPattern: b) }
        reason[text.count] = 0
        return 1
    }
}

extension Store {
    /// Names the check another device's version of a record in `collection` must pass before
    /// the sync provider applies it (`declare_sync_check`, ABI 1.4): return nil to accept, or
    /// the rule that failed. Declare the collection syncable first, in init(). Returns false
    /// when the host is older than ABI 1.4.
    @discardableResult
    public func declareSyncCheck(_ collection: String,
                                 _ rule: @escaping @Sendable (_ key: String, _ value: [UInt8]) -> String?) throws(PluginError) -> Bool {
        guard let declare = TermhostStruct.member(vtable, \.declare_sync_check) else { return false }
        // Kept for the process: the host may call it until the process ends.
        let user = Unmanaged.passRetained(SyncCheckBox(rule)).toOpaque()
        try check { declare(host, collection, SyncCheckBox.trampoline, user, $0) }
        return true
    }
}

extension PluginHost {
    /// termhost.sync-store/1, for the sync provider only: every call of another plugin throws
    /// `TERMHOST_ERR_DENIED`. nil when the host is older than ABI 1.3 or has no store.
    public var syncStore: SyncStore? {
        typed(TERMHOST_SERVICE_SYNC_STORE, termhost_host_sync_store_t.self).map { SyncStore(host: raw, vtable: $0) }
    }
}

/// `termhost_host_sync_store_t`: other plugins' syncable records, for the sync provider.
public struct SyncStore: @unchecked Sendable {
    let host: UnsafePointer<termhost_host_t>
    let vtable: UnsafePointer<termhost_host_sync_store_t>

    /// One declared collection.
    public struct Collection: Sendable, Equatable {
        public let namespace: String
        public let collection: String
        public let merge: SyncMerge
        public let localFields: [String]
    }

    public func collections() throws(PluginError) -> [Collection] {
        final class Box { var items: [Collection] = [] }
        let box = Box()
        try check { err in
            vtable.pointee.collections(host, { user, ns, coll, merge, local in
                let fields = String(cString: local!)
                Unmanaged<Box>.fromOpaque(user!).takeUnretainedValue().items.append(Collection(
                    namespace: String(cString: ns!), collection: String(cString: coll!), merge: SyncMerge(rawValue: merge) ?? .record,
                    localFields: fields.isEmpty ? [] : fields.split(separator: ",").map(String.init)))
                return 0
            }, Unmanaged.passUnretained(box).toOpaque(), err)
        }
        return box.items
    }

    /// Journal rows of syncable collections after `after`, oldest first.
    public func journal(after: Int64) throws(PluginError) -> [Store.JournalRow] {
        final class Box { var rows: [Store.JournalRow] = [] }
        let box = Box()
        try check { err in
            vtable.pointee.journal_since(host, after, { user, seq, ns, coll, key, op in
                Unmanaged<Box>.fromOpaque(user!).takeUnretainedValue().rows.append(Store.JournalRow(
                    sequence: seq, namespace: String(cString: ns!), collection: String(cString: coll!),
                    key: String(cString: key!), operation: String(cString: op!)))
                return 0
            }, Unmanaged.passUnretained(box).toOpaque(), err)
        }
        return box.rows
    }

    /// nil when the record is absent.
    public func get(_ namespace: String, _ collection: String, _ key: String) throws(PluginError) -> [UInt8]? {
        let sink = ByteSink()
        var err = termhostEmptyError()
        let rc = vtable.pointee.get(host, namespace, collection, key, ByteSink.sink, Unmanaged.passUnretained(sink).toOpaque(), &err)
        if rc == Int32(TERMHOST_ERR_NOT_FOUND) { return nil }
        guard rc == Int32(TERMHOST_OK) else { throw PluginError(termhostErrorMessage(err), code: rc) }
        return sink.bytes
    }

    /// Every key of a syncable collection, in key order.
    public func keys(_ namespace: String, _ collection: String) throws(PluginError) -> [String] {
        final class Box { var keys: [String] = [] }
        let box = Box()
        try check { err in
            vtable.pointee.list(host, namespace, collection, { user, key, _, _ in
                Unmanaged<Box>.fromOpaque(user!).takeUnretainedValue().keys.append(String(cString: key!))
                return 0
            }, Unmanaged.passUnretained(box).toOpaque(), err)
        }
        return box.keys
    }

    /// Why the owner refuses another device's version of a record (its check, ABI 1.4), or nil
    /// when it accepts it, names no check, or the host is older than ABI 1.4.
    public func refusal(_ namespace: String, _ collection: String, _ key: String, _ value: [UInt8]) throws(PluginError) -> String? {
        guard let run = TermhostStruct.member(vtable, \.check) else { return nil }
        var err = termhostEmptyError()
        let rc = value.withUnsafeBytes { run(host, namespace, collection, key, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), $0.count, &err) }
        if rc == Int32(TERMHOST_ERR_INVALID_ARGUMENT) { return termhostErrorMessage(err) }
        guard rc == Int32(TERMHOST_OK) else { throw PluginError(termhostErrorMessage(err), code: rc) }
        return nil
    }

    /// Writes another device's version (nil deletes) after the host publishes
    /// `termhost.sync.applying` so the owner retires runtime state built from the old one.
    public func apply(_ namespace: String, _ collection: String, _ key: String, _ value: [UInt8]?) throws(PluginError) {
        try check { err in
            if let value {
                return value.withUnsafeBytes { vtable.pointee.apply(host, namespace, collection, key, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), $0.count, err) }
            }
            return vtable.pointee.apply(host, namespace, collection, key, nil, 0, err)
        }
    }
}
