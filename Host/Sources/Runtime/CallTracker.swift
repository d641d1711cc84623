import CCrashRecorder
import Glibc

/// Brackets every call the host makes into plugin code, so that the fatal-signal recorder
/// (Host/Sources/CCrashRecorder) can name the plugin and the call a crash happened in. The
/// bracket is two inline C functions storing three words in a per-thread slot: no lock, no
/// allocation, no system call (see Docs/Architecture.md, "Crash containment").
enum CallTracker {
    /// The slot index of a plugin not registered (the recorder ignores calls made with it).
    static let unregistered: Int32 = -1

    /// Registers a loaded plugin with what the marker line must say about it: its ID, the
    /// sha256 and path of the exact file (so the next start quarantines that file and no other).
    static func register(pluginID: String, sha256: String?, library: String?) -> Int32 {
        let record = [pluginID, sha256 ?? "-", CrashMarker.escape(library ?? "-")].joined(separator: "\t")
        return termhost_crash_recorder_add_plugin(record)
    }

    /// Tells the recorder where the plugin's code is (the image holding `address`, such as its
    /// entry struct), so that a fault on a thread the plugin started itself is attributed too.
    static func registerImage(_ plugin: Int32, containing address: UnsafeRawPointer) {
        _ = termhost_crash_recorder_add_image(plugin, address)
    }

    /// Runs `body` (a call into plugin code) with the slot saying which plugin and call it is.
    /// `call` is a literal, so its bytes outlive the call; `argument` (a feature ID, a command
    /// name) is copied to a C string only for the duration of the call.
    @inline(__always)
    static func inside<T, E: Error>(_ plugin: Int32, _ call: StaticString, _ argument: String? = nil,
                                    _ body: () throws(E) -> T) throws(E) -> T {
        let name = UnsafeRawPointer(call.utf8Start).assumingMemoryBound(to: CChar.self)
        guard let argument else {
            let previous = termhost_call_enter(plugin, name, nil)
            defer { termhost_call_leave(previous) }
            return try body()
        }
        let result: Result<T, E> = argument.withCString { arg in
            let previous = termhost_call_enter(plugin, name, arg)
            defer { termhost_call_leave(previous) }
            do throws(E) { return .success(try body()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Like `inside`, with an argument already held as a C string for the instance's lifetime
    /// (the hot path: lifecycle callbacks and commands of a live feature).
    @inline(__always)
    static func inside<T>(_ plugin: Int32, _ call: StaticString, cArgument: UnsafePointer<CChar>?, _ body: () -> T) -> T {
        let previous = termhost_call_enter(plugin, UnsafeRawPointer(call.utf8Start).assumingMemoryBound(to: CChar.self), cArgument)
        defer { termhost_call_leave(previous) }
        return body()
    }
}
