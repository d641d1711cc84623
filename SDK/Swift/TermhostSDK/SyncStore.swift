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
