import CTermhost
import Glibc

/// `termhost_ssh_transport_t` ("org.termhost.ssh.transport/1", SDK/include/termhost/ssh/transport.h):
/// authenticated SSH connections from the SSH plugin. Plugins that need SSH (SFTP, forwarding,
/// metrics) use this instead of connecting, verifying host keys or authenticating themselves.
public struct SSHTransport: @unchecked Sendable {
    public let vtable: UnsafePointer<termhost_ssh_transport_t>
    let host: UnsafePointer<termhost_host_t>

    /// The service, when the SSH feature is active and provides it.
    public init?(host: PluginHost) {
        guard let raw = host.service(TERMHOST_SSH_TRANSPORT) else { return nil }
        self.host = host.raw
        vtable = raw.assumingMemoryBound(to: termhost_ssh_transport_t.self)
    }

    /// The host the service was found through: for logging what a connection decided.
    public var pluginHost: PluginHost { PluginHost(host) }

    /// `open`: connects and authenticates, prompting on the scene's terminal when needed
    /// (fails closed without one). The error's code is TERMHOST_ERR_DENIED for refused trust or
    /// credentials, TERMHOST_ERR_IO for network and server failures.
    public func open(_ destination: String, scene: UInt64) throws(PluginError) -> Connection {
        var handle: OpaquePointer?
        try check { vtable.pointee.open(host, scene, destination, &handle, $0) }
        return Connection(vtable: vtable, handle: handle)
    }

    /// One connection; call `close()` when done (the handle is useless afterwards).
    public struct Connection: @unchecked Sendable {
        let vtable: UnsafePointer<termhost_ssh_transport_t>
        public let handle: OpaquePointer?

        /// `close`: disconnects within a bounded time.
        public func close() { vtable.pointee.close(handle) }

        /// `with_session`: runs body on the connection's executor with the raw
        /// LIBSSH2_SESSION (blocking mode) and its socket. An error thrown by body comes back
        /// with its code and message.
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

        /// `exec`: runs a command to completion; output arrives in order through the handlers.
        public func exec(_ command: String, stdin: [UInt8] = [],
                         stdout: ((UnsafeRawBufferPointer) -> Void)? = nil,
                         stderr: ((UnsafeRawBufferPointer) -> Void)? = nil) throws(PluginError) -> Int32 {
            final class Box {
                var out: ((UnsafeRawBufferPointer) -> Void)?
                var err: ((UnsafeRawBufferPointer) -> Void)?
            }
            return try withoutActuallyEscaping(stdout ?? { _ in }) { out throws(PluginError) -> Int32 in
                try withoutActuallyEscaping(stderr ?? { _ in }) { errOut throws(PluginError) -> Int32 in
                    let box = Box()
                    box.out = out
                    box.err = errOut
                    var status: Int32 = 0
                    let user = Unmanaged.passUnretained(box).toOpaque()
                    try check { err in
                        stdin.withUnsafeBytes { input in
                            vtable.pointee.exec(handle, command, input.baseAddress, input.count, { user, data, size in
                                Unmanaged<Box>.fromOpaque(user!).takeUnretainedValue().out?(UnsafeRawBufferPointer(start: data, count: size))
                            }, { user, data, size in
                                Unmanaged<Box>.fromOpaque(user!).takeUnretainedValue().err?(UnsafeRawBufferPointer(start: data, count: size))
                            }, user, &status, err)
                        }
                    }
                    return status
                }
            }
        }

        /// `open_direct_tcpip`: a channel to host:port as the server sees it, bridged to the
        /// returned local socket (owned by the caller: close it to close the channel).
        public func openDirectTCPIP(host: String, port: Int32) throws(PluginError) -> Int32 {
            var fd: Int32 = -1
            try check { vtable.pointee.open_direct_tcpip(handle, host, port, &fd, $0) }
            return fd
        }
    }
}
