import Foundation
import TermhostRegistry

/// The plugin calls the host is inside right now that may outlive a signal: commands
/// (run_command) above all. Shutdown asks it which instances it must not destroy, and the
/// signal path waits here for the command to return. Before, destroy() and deinit() ran while
/// run_command() was still executing on the main thread.
public final class CallsInProgress: @unchecked Sendable {
    public struct Call: Sendable, Equatable {
        public let feature: FeatureID
        /// The plugin's label (its directory), to keep its deinit() from running.
        public let source: String
        public let command: String
        /// The instance called, to keep it from being destroyed.
        public let instance: ObjectIdentifier
    }

    private let condition = NSCondition()
    private var calls: [UInt64: Call] = [:]
    private var nextToken: UInt64 = 1

    public init() {}

    /// Records a call into `instance`; pass the token to `leave` when it returns.
    public func enter(_ instance: AnyObject, feature: FeatureID, source: String, command: String) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        let token = nextToken
        nextToken &+= 1
        calls[token] = Call(feature: feature, source: source, command: command, instance: ObjectIdentifier(instance))
        return token
    }

    public func leave(_ token: UInt64) {
        condition.lock()
        calls[token] = nil
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until no call into any of `instances` is running or `deadline` passed; returns
    /// the instances still called.
    public func waitUntilNone(of instances: [AnyObject], before deadline: Date) -> Set<ObjectIdentifier> {
        let wanted = Set(instances.map(ObjectIdentifier.init))
        condition.lock()
        defer { condition.unlock() }
        func busy() -> Set<ObjectIdentifier> { wanted.intersection(calls.values.map(\.instance)) }
        while !busy().isEmpty && condition.wait(until: deadline) {}
        return busy()
    }

    /// Waits until every call returned or `deadline` passed; returns the calls still running.
    public func waitUntilNone(before deadline: Date) -> [Call] {
        condition.lock()
        defer { condition.unlock() }
        while !calls.isEmpty && condition.wait(until: deadline) {}
        return calls.keys.sorted().map { calls[$0]! }
    }
}
