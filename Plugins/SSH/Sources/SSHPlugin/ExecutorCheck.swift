import Dispatch

/// Debug-build checks of the thread rules in transport.h (compiled out of release builds):
/// code marked [executor] touches libssh2 and must run on its connection's serial queue (one
/// caller per session); an entry point that waits for that queue must not be called from it
/// (a with_session body, on_lost or on_accept calling the service on its own connection),
/// which would deadlock: in a debug build it traps here, naming the rule, instead of hanging.
enum ExecutorCheck {
    #if DEBUG
    /// Marks each connection's executor with its own identity (`mark`), so a check can tell
    /// "this queue" from "some other connection's queue".
    private static let key = DispatchSpecificKey<ObjectIdentifier>()
    #endif

    /// Called once per executor, when its connection is made.
    static func mark(_ queue: DispatchQueue) {
        #if DEBUG
        queue.setSpecific(key: key, value: ObjectIdentifier(queue))
        #endif
    }

    /// [executor]: on the connection's queue.
    @inline(__always)
    static func onExecutor(_ queue: DispatchQueue, _ function: StaticString = #function) {
        #if DEBUG
        precondition(DispatchQueue.getSpecific(key: key) == ObjectIdentifier(queue),
                     "\(function) is [executor] (transport.h): it touches libssh2 and must run on its connection's queue \(queue.label)")
        #endif
    }

    /// [any-thread, not this connection's executor]: about to wait for the queue.
    @inline(__always)
    static func offExecutor(_ queue: DispatchQueue) {
        #if DEBUG
        precondition(DispatchQueue.getSpecific(key: key) != ObjectIdentifier(queue),
                     "a callback running on an SSH connection's executor (\(queue.label), transport.h [session]) called the "
                     + "transport service on the same connection: the call would wait for itself forever; hand the work to another thread")
        #endif
    }
}
