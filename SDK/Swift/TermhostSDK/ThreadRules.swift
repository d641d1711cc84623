import Glibc

/// Debug-build checks of the [main] rule (SDK/include/termhost/entry.h), compiled out of
/// release builds. [main] host services (commands.list, commands.run) are serialized by the
/// host only because they are called from inside a [main] callback it made; called from a
/// plugin's own thread or a [session] callback they would race the host's lifecycle. The
/// Swift layer marks each [main] callback it forwards (per thread) and the [main] wrappers
/// trap, naming the rule, when called outside one.
public enum ThreadRules {
    #if DEBUG
    /// Per thread: how many [main] callbacks into this plugin are on the stack.
    private static let depthKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    private static var depth: Int { Int(bitPattern: pthread_getspecific(depthKey)) }
    #endif

    /// Runs body as a [main] callback the host made.
    @inline(__always)
    static func main<T>(_ body: () -> T) -> T {
        #if DEBUG
        let outer = depth
        pthread_setspecific(depthKey, UnsafeRawPointer(bitPattern: outer + 1))
        defer { pthread_setspecific(depthKey, UnsafeRawPointer(bitPattern: outer)) }
        #endif
        return body()
    }

    /// Traps in a debug build when `call` ([main]) is made outside a [main] callback.
    @inline(__always)
    public static func requireMain(_ call: String) {
        #if DEBUG
        precondition(depth > 0, "\(call) is [main] (entry.h): call it from inside a callback the host made "
                     + "(activate, run_command, shutdown...), not from a thread of your own or a [session] callback")
        #endif
    }
}
