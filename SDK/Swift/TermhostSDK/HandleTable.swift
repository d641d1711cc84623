import Synchronization

/// The opaque handles a service gives other plugins for the objects it keeps (a connection, a
/// session). A handle is a generation token, not a pointer: every `insert` gets a number never
/// given out before, so a handle kept after `remove` (or a stray one) finds nothing, and the
/// service answers TERMHOST_ERR_NOT_FOUND instead of touching freed memory or a newer object
/// that reused the address.
///
/// [thread-safe]: every method takes one lock, held only for the table operation itself.
public final class HandleTable<Object: AnyObject & Sendable>: Sendable {
    private let state = Mutex<(last: UInt64, live: [UInt64: Object])>((0, [:]))

    public init() {}

    /// Keeps `object` and returns its new handle (never NULL, never one returned before).
    public func insert(_ object: Object) -> OpaquePointer {
        let token = state.withLock { s -> UInt64 in
            s.last += 1
            s.live[s.last] = object
            return s.last
        }
        return OpaquePointer(bitPattern: UInt(token))!
    }

    /// The object `handle` names, or nil when it was removed, is NULL, or was never given out.
    public func lookup(_ handle: OpaquePointer?) -> Object? {
        guard let token = Self.token(handle) else { return nil }
        return state.withLock { $0.live[token] }
    }

    /// Forgets `handle` and returns its object; nil if it named none (so of two racing closes,
    /// exactly one gets the object).
    public func remove(_ handle: OpaquePointer?) -> Object? {
        guard let token = Self.token(handle) else { return nil }
        return state.withLock { $0.live.removeValue(forKey: token) }
    }

    /// Forgets every object `matching` accepts and returns them; their handles find nothing from
    /// now on. `matching` runs under the lock: it must not call back into the table.
    public func removeAll(where matching: (Object) -> Bool = { _ in true }) -> [Object] {
        state.withLock { s in
            let gone = s.live.filter { matching($0.value) }
            for token in gone.keys { s.live[token] = nil }
            return Array(gone.values)
        }
    }

    private static func token(_ handle: OpaquePointer?) -> UInt64? {
        handle.map { UInt64(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer($0)))) }
    }
}
