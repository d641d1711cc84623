import Foundation

/// A value several threads of one test append to, read under the same lock.
public final class UnsafeSendableBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    public init(_ value: T) { stored = value }
    public var value: T { lock.lock(); defer { lock.unlock() }; return stored }
    public func append<E>(_ element: E) where T == [E] { lock.lock(); stored.append(element); lock.unlock() }
}
