import CTermhost
import Glibc

/// `termhost_ssh_transport_t` ("org.termhost.ssh.transport/1", SDK/include/termhost/ssh/transport.h):
/// authenticated SSH connections from the SSH plugin. Plugins that need SSH (SFTP, forwarding,
/// metrics) use this instead of connecting, verifying host keys or authenticating themselves.
public struct SSHTransport: @unchecked Sendable {
    public let vtable: UnsafePointer<termhost_ssh_transport_t>
    let host: UnsafePointer<termhost_host_t>

    /// The service, when the SSH feature is active and provides it. Look it up again after
    /// the SSH feature was deactivated (background, expire): the table goes with its instance.
    /// [any-thread]
    public init?(host: PluginHost) {
        guard let raw = host.service(TERMHOST_SSH_TRANSPORT) else { return nil }
        self.host = host.raw
        vtable = raw.assumingMemoryBound(to: termhost_ssh_transport_t.self)
    }

    /// The host the service was found through: for logging what a connection decided.
    public var pluginHost: PluginHost { PluginHost(host) }

    /// Whether the SSH plugin offers `exec_bounded` (ABI 1.2). [any-thread]
    public var offersBoundedExec: Bool { TermhostStruct.member(vtable, \.exec_bounded) != nil }

    /// `open`: connects and authenticates, prompting on the scene's terminal when needed
    /// (fails closed without one). The error's code is TERMHOST_ERR_DENIED for refused trust or
    /// credentials, TERMHOST_ERR_IO for network and server failures. [any-thread]
    /// `shared` (open_with's TERMHOST_SSH_OPEN_SHARED, ABI 1.8): in the daemon, join a live
    /// connection other shared callers hold to the same destination instead of making one;
    /// only for work made of channels and short `withSession` bodies. Against an SSH plugin
    /// older than 1.8 it is an ordinary open.
    public func open(_ destination: String, scene: UInt64, shared: Bool = false) throws(PluginError) -> Connection {
        var handle: OpaquePointer?
        if shared, let openWith = TermhostStruct.member(vtable, \.open_with) {
            try check { openWith(host, scene, destination, UInt32(TERMHOST_SSH_OPEN_SHARED), &handle, $0) }
        } else {
            try check { vtable.pointee.open(host, scene, destination, &handle, $0) }
        }
        return Connection(vtable: vtable, handle: handle)
    }

    /// One connection; call `close()` when done (the handle is useless afterwards). Two values
    /// are equal when they name the same connection. Every call may be made from any thread:
    /// the SSH plugin runs it on the connection's executor.
    public struct Connection: @unchecked Sendable, Equatable {
        let vtable: UnsafePointer<termhost_ssh_transport_t>
        public let handle: OpaquePointer?

        public static func == (a: Connection, b: Connection) -> Bool { a.handle == b.handle }

        /// `close`: disconnects within a bounded time. [any-thread]
        public func close() { vtable.pointee.close(handle) }

        /// `with_session`: runs body on the connection's executor with the raw
        /// LIBSSH2_SESSION (blocking mode) and its socket. An error thrown by body comes back
        /// with its code and message. [any-thread; body runs on the connection's executor]
        public func withSession(_ body: (_ session: OpaquePointer, _ socket: Int32) throws(PluginError) -> Void) throws(PluginError) {
            try withoutActuallyEscaping(body) { (escapable) throws(PluginError) in
                final class Box {
                    let body: (OpaquePointer, Int32) throws(PluginError) -> Void
                    var error: PluginError?
                    init(_ body: @escaping (OpaquePointer, Int32) throws(PluginError) -> Void) { self.body = body }
                }
                let box = Box(escapable)
                var err = termhostEmptyError()
                let rc = vtable.pointee.with_session(handle, { user, session, socket, err in
                    let box = Unmanaged<Box>.fromOpaque(user!).takeUnretainedValue()
                    do throws(PluginError) {
                        try box.body(OpaquePointer(session!), socket)
                        return Int32(TERMHOST_OK)
                    } catch {
                        box.error = error
                        termhostWriteError(err, error.code, error.message)
                        return error.code
                    }
                }, Unmanaged.passUnretained(box).toOpaque(), &err)
                if let error = box.error { throw error }
                guard rc == Int32(TERMHOST_OK) else { throw PluginError(termhostErrorMessage(err), code: rc) }
            }
        }

        /// `exec`: runs a command to completion and returns its exit status; output arrives in
        /// order through the handlers, on the calling thread. [any-thread]
        public func exec(_ command: String, stdin: [UInt8] = [],
                         stdout: ((UnsafeRawBufferPointer) -> Void)? = nil,
                         stderr: ((UnsafeRawBufferPointer) -> Void)? = nil) throws(PluginError) -> Int32 {
            try run(command, stdin: stdin, stdout: stdout, stderr: stderr) { user, input, status, err in
                vtable.pointee.exec(handle, command, input.baseAddress, input.count, Connection.toStdout, Connection.toStderr,
                                    user, status, err)
            }
        }

        /// `exec_bounded`: like `exec`, but the command must finish within `deadline` (nil: no
        /// deadline; at most one day), and `cancel.cancel()` from any thread stops it. Either
        /// way its channel is closed and the error says which, naming the command: code
        /// TERMHOST_ERR_TIMEOUT or TERMHOST_ERR_CANCELLED. The handlers run on this thread.
        /// Against an SSH plugin older than 1.2, TERMHOST_ERR_UNSUPPORTED. [any-thread]
        public func exec(_ command: String, stdin: [UInt8] = [], deadline: Duration?, cancel: ExecCancel? = nil,
                         stdout: ((UnsafeRawBufferPointer) -> Void)? = nil,
                         stderr: ((UnsafeRawBufferPointer) -> Void)? = nil) throws(PluginError) -> Int32 {
            guard let bounded = TermhostStruct.member(vtable, \.exec_bounded) else {
                throw PluginError("ssh: the SSH plugin predates ABI 1.2: it cannot run a command with a deadline or cancel it",
                                  code: Int32(TERMHOST_ERR_UNSUPPORTED))
            }
            var ms = 0
            if let deadline {
                // Rounded up: a deadline of 0.5 ms is not "no deadline".
                let (seconds, attoseconds) = deadline.components
                // Saturating: a huge Duration is refused by the range check below, not a trap.
                let whole = seconds.multipliedReportingOverflow(by: 1000)
                let part = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
                let total = whole.overflow ? (partialValue: Int64.max, overflow: true) : whole.partialValue.addingReportingOverflow(part)
                let value = total.overflow ? Int64.max : total.partialValue
                do throws(NumberOutOfRange) { ms = try BoundedNumber.check(value, name: "exec's deadline", in: 1...86_400_000, unit: "ms") } catch {
                    throw PluginError(error.description, code: Int32(TERMHOST_ERR_INVALID_ARGUMENT))
                }
            }
            return try run(command, stdin: stdin, stdout: stdout, stderr: stderr) { user, input, status, err in
                bounded(handle, command, input.baseAddress, input.count, Connection.toStdout, Connection.toStderr, user,
                        UInt32(ms), cancel.map { UnsafePointer($0.flag) }, status, err)
            }
        }

        /// The handlers of one exec call, reached from the C sinks through `user`.
        private final class Sinks {
            var out: ((UnsafeRawBufferPointer) -> Void)?
            var err: ((UnsafeRawBufferPointer) -> Void)?
        }

        private static let toStdout: termhost_value_sink = { user, data, size in
            Unmanaged<Sinks>.fromOpaque(user!).takeUnretainedValue().out?(UnsafeRawBufferPointer(start: data, count: size))
        }
        private static let toStderr: termhost_value_sink = { user, data, size in
            Unmanaged<Sinks>.fromOpaque(user!).takeUnretainedValue().err?(UnsafeRawBufferPointer(start: data, count: size))
        }

        private func run(_ command: String, stdin: [UInt8], stdout: ((UnsafeRawBufferPointer) -> Void)?,
                         stderr: ((UnsafeRawBufferPointer) -> Void)?,
                         call: (UnsafeMutableRawPointer, UnsafeRawBufferPointer, UnsafeMutablePointer<Int32>,
                                UnsafeMutablePointer<termhost_error_t>) -> termhost_status) throws(PluginError) -> Int32 {
            try withoutActuallyEscaping(stdout ?? { _ in }) { out throws(PluginError) -> Int32 in
                try withoutActuallyEscaping(stderr ?? { _ in }) { errOut throws(PluginError) -> Int32 in
                    let sinks = Sinks()
                    sinks.out = out
                    sinks.err = errOut
                    var status: Int32 = 0
                    let user = Unmanaged.passUnretained(sinks).toOpaque()
                    try check { err in stdin.withUnsafeBytes { input in call(user, input, &status, err) } }
                    return status
                }
            }
        }
    }
}

/// The cancel flag of `Connection.exec(_:deadline:cancel:)`: call `cancel()` from any thread
/// while the exec runs (transport.h, termhost_ssh_cancel_request). One flag may serve several
/// calls; once set it stays set.
public final class ExecCancel: @unchecked Sendable {
    let flag: UnsafeMutablePointer<Int32>

    public init() {
        flag = .allocate(capacity: 1)
        flag.initialize(to: 0)
    }

    deinit { flag.deallocate() }

    /// Sets the flag; the running exec stops within 50 ms. [any-thread]
    public func cancel() { termhost_ssh_cancel_request(flag) }
    /// Whether `cancel()` was called. [any-thread]
    public var isCancelled: Bool { termhost_ssh_cancel_requested(flag) != 0 }
}
