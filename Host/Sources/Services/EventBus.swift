/// Publish/subscribe between features. Delivery is synchronous, on the publisher's thread, in
/// subscription order; "*" subscribes to every topic. Handlers are snapshotted before delivery,
/// so a handler may subscribe or unsubscribe without deadlock.
public final class EventBus: @unchecked Sendable {
    public typealias Handler = @Sendable (_ topic: String, _ payload: String) -> Void

    struct Subscription { let token: UInt64; let owner: String; let topic: String; let handler: Handler }

    private let lock = RecursiveLock()
    private var subscriptions: [Subscription] = []
    private var nextToken: UInt64 = 1

    public init() {}

    @discardableResult
    public func subscribe(owner: String, topic: String, _ handler: @escaping Handler) -> UInt64 {
        lock.withLock {
            let token = nextToken
            nextToken += 1
            subscriptions.append(Subscription(token: token, owner: owner, topic: topic, handler: handler))
            return token
        }
    }

    public func unsubscribe(_ token: UInt64) {
        lock.withLock { subscriptions.removeAll { $0.token == token } }
    }

    /// Ends every subscription of one owner (a plugin's deinit).
    public func unsubscribeAll(owner: String) {
        lock.withLock { subscriptions.removeAll { $0.owner == owner } }
    }

    public func publish(_ topic: String, _ payload: String = "null") {
        let targets = lock.withLock { subscriptions.filter { $0.topic == topic || $0.topic == "*" } }
        for s in targets { s.handler(topic, payload) }
    }
}
