import CTermhost

/// `termhost_host_cancel_t` (`termhost.cancel/1`, services/commands.h; added in ABI 1.2): how a
/// running command learns that the user pressed Ctrl-C (or the host got SIGTERM or SIGHUP).
/// Poll `isCancelled(scene:)` between steps, or register a handler that wakes the command, then
/// clean up and return (130 by convention). The host waits for run_command() to return (at
/// most 3 s) before it destroys anything.
public struct Cancellation: @unchecked Sendable {
    let host: UnsafePointer<termhost_host_t>
    let vtable: UnsafePointer<termhost_host_cancel_t>

    /// `is_cancelled`: whether the commands in `scene` were asked to stop. Cheap.
    public func isCancelled(scene: UInt64) -> Bool { vtable.pointee.is_cancelled(host, scene) != 0 }

    /// A registered handler; call `remove()` before the command returns. Removing is final:
    /// once `remove()` returns, the handler is not running and will not run.
    public final class Registration: @unchecked Sendable {
        let host: UnsafePointer<termhost_host_t>
        let vtable: UnsafePointer<termhost_host_cancel_t>
        let handler: @Sendable (_ scene: UInt64) -> Void
        var token: UInt64 = 0
        init(host: UnsafePointer<termhost_host_t>, vtable: UnsafePointer<termhost_host_cancel_t>,
             handler: @escaping @Sendable (UInt64) -> Void) {
            self.host = host
            self.vtable = vtable
            self.handler = handler
        }
        public func remove() { vtable.pointee.remove(host, token) }
    }

    /// `on_cancel`: runs `handler` once, on a host thread, when `scene` is cancelled (at once,
    /// on this thread, if it already is). Keep it short: wake the command, do not wait for it.
    /// Keep the registration alive until `remove()`.
    public func onCancel(scene: UInt64, _ handler: @escaping @Sendable (_ scene: UInt64) -> Void) throws(PluginError) -> Registration {
        let registration = Registration(host: host, vtable: vtable, handler: handler)
        var token: UInt64 = 0
        try check { err in
            vtable.pointee.on_cancel(host, scene, { user, scene in
                Unmanaged<Registration>.fromOpaque(user!).takeUnretainedValue().handler(scene)
            }, Unmanaged.passUnretained(registration).toOpaque(), &token, err)
        }
        registration.token = token
        return registration
    }
}

extension PluginHost {
    /// `termhost.cancel/1`, or nil in a host older than ABI 1.2 (which gives commands no way to
    /// learn of Ctrl-C before it tears the plugin down).
    public var cancellation: Cancellation? {
        typed(TERMHOST_SERVICE_CANCEL, termhost_host_cancel_t.self).map { Cancellation(host: raw, vtable: $0) }
    }
}
