import CTermhost
import Dispatch
import Foundation
import Synchronization

/// Design: the host publishes `termhost.sync.applying` (services/sync_store.h) on the sync
/// provider's thread *before* it writes another device's version of a record, and the payload
/// names the record but does not carry it. An owner that must decide whether the change matters
/// (a host's route, not its tags) needs the record before and after, so `SyncApplyingWatch`
/// reads the old value in the handler (on the applying thread, inside the provider's store
/// transaction if there is one) and the new one on its own serial queue, where the read waits
/// on the store's lock until the provider's transaction commits. A provider that applies
/// outside a transaction writes right after the event returns: the queue then re-reads for a
/// short, bounded time until the value differs. An unchanged value at the end means the
/// write did not happen or wrote the same bytes; either way nothing changed.

/// One applied remote version of a record of the watching plugin: its value before and after
/// (nil when absent).
public struct SyncAppliedChange: Sendable {
    public var record: SyncApplying
    public var before: [UInt8]?
    public var after: [UInt8]?
}

/// Watches `termhost.sync.applying` for some collections of the calling plugin's own namespace
/// and hands each applied change, with the record before and after, to `handler` on a serial
/// queue of its own, after the write. A payload that does not decode is ignored with a log line.
/// Cancel it before the plugin's deinit(): at shutdown, so that no queued change reads the
/// store after the host closed it. [any-thread]
public final class SyncApplyingWatch: @unchecked Sendable {
    private let subscription: Events.Subscription
    private let queue: DispatchQueue
    /// Set by cancel(); queued changes check it before each store read and before the handler.
    private let cancelled = CancelFlag()

    /// How long the queue re-reads a record whose write has not landed yet (see the design note).
    public static let settleSeconds = 0.5

    /// - Parameters:
    ///   - namespace: the plugin's own store namespace (its plugin ID); other namespaces' events
    ///     are skipped.
    ///   - collections: the collections to watch.
    ///   - handler: called once per applied change, in order, on the watch's queue; it may
    ///     block briefly (stop a listener, close a socket) but must not wait for the provider.
    /// Returns nil when the host has no events or store service.
    public init?(host: PluginHost, namespace: String, collections: Set<String>,
                 handler: @escaping @Sendable (SyncAppliedChange) -> Void) throws(PluginError) {
        guard let events = host.events, let store = host.store else { return nil }
        let queue = DispatchQueue(label: "termhost.sync-applying.\(namespace)")
        self.queue = queue
        let cancelled = self.cancelled
        subscription = try events.subscribe(TERMHOST_EVENT_SYNC_APPLYING) { _, json in
            guard let record = SyncApplying(json: json) else {
                host.log(.warning, "ignored a \(TERMHOST_EVENT_SYNC_APPLYING) event whose payload is not the documented object: \(VisibleText.of(String(json.prefix(200))))")
                return
            }
            guard record.namespace == namespace, collections.contains(record.collection) else { return }
            let before = try? store.get(record.collection, record.key)
            queue.async {
                guard let after = Self.settled(store, record, before: before, cancelled: cancelled),
                      !cancelled.isSet else { return }
                handler(SyncAppliedChange(record: record, before: before, after: after))
            }
        }
    }

    /// The record once the provider's write is visible (`.some(nil)`: deleted); `before` when it
    /// never differs within `settleSeconds`; nil when the watch was cancelled meanwhile.
    private static func settled(_ store: Store, _ record: SyncApplying, before: [UInt8]?,
                                cancelled: CancelFlag) -> [UInt8]?? {
        let deadline = DispatchTime.now() + settleSeconds
        while !cancelled.isSet {
            let now = try? store.get(record.collection, record.key)
            if now != before || DispatchTime.now() >= deadline { return .some(now) }
            usleep(5_000)
        }
        return nil
    }

    /// Ends the subscription, drops the changes still queued and waits for the one being handed
    /// over, if any (its handler's own time, at most). Not from the handler.
    public func cancel() {
        subscription.cancel()
        cancelled.set()
        queue.sync {}
    }

    deinit { subscription.cancel() }
}

/// A flag set once, read from any thread (the watch's queue checks it between steps).
final class CancelFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}
