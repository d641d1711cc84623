import SyncCore

/// A real backend with a test's hooks around it: every call goes to `inner` unless a subclass
/// overrides it (another device writing just before a push, an answer lost after a commit,
/// statements counted).
open class ForwardingBackend: SyncBackend {
    public let inner: SyncBackend

    public init(_ inner: SyncBackend) { self.inner = inner }

    open var summary: String { inner.summary }
    open func open(device: String) throws(SyncBackendError) -> SyncVaultInfo { try inner.open(device: device) }
    open func pull(after cursor: SyncCursor, limit: Int) throws(SyncBackendError) -> SyncPage { try inner.pull(after: cursor, limit: limit) }
    open func push(_ changes: [SyncChange], device: String) throws(SyncBackendError) -> [SyncPushResult] { try inner.push(changes, device: device) }
    open func lastChangeID(device: String) throws(SyncBackendError) -> String? { try inner.lastChangeID(device: device) }
    open func cursor(_ cursor: SyncCursor, skippingOwn versions: [SyncVersion], device: String) -> SyncCursor {
        inner.cursor(cursor, skippingOwn: versions, device: device)
    }
    open func acknowledge(device: String, cursor: SyncCursor) throws(SyncBackendError) { try inner.acknowledge(device: device, cursor: cursor) }
    open func purgeTombstones(force: Bool) throws(SyncBackendError) -> Int { try inner.purgeTombstones(force: force) }
    open func waitForChanges(after cursor: SyncCursor, seconds: Double) -> Bool { inner.waitForChanges(after: cursor, seconds: seconds) }
    open func history(of id: SyncRecordID?, limit: Int) throws(SyncBackendError) -> [SyncHistoryEntry] { try inner.history(of: id, limit: limit) }
    open func close() { inner.close() }
}

/// The real backend with `hook` run before each push: another device writes at the worst moment.
public final class HookBeforePush: ForwardingBackend {
    public var hook: (() -> Void)?

    override public func push(_ changes: [SyncChange], device: String) throws(SyncBackendError) -> [SyncPushResult] {
        hook?()
        return try inner.push(changes, device: device)
    }
}
