import CTermhost
import Glibc

/// Forwarders' entries (transport.h: forward_listen, cancel_forward, watch, splice_direct_tcpip,
/// end_spliced). Their callbacks stay C functions with a user pointer, as the header has them:
/// a forwarder's splice runs once per client stream, and a Swift closure here would cost an
/// allocation per stream. The callbacks run on the connection's executor ([session]) and must
/// not call this service on the same connection: hand the news to another thread.
extension SSHTransport {
    /// `forward_listen`'s on_accept(user, fd, origin_host, origin_port): fd is the caller's end
    /// of a bridged socket, owned by the caller from then on; origin_host is borrowed for the
    /// call. [session]
    public typealias AcceptCallback = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, Int32) -> Void
    /// `watch`'s on_lost(user, reason): reason is borrowed for the call. [session]
    public typealias LostCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void
    /// `splice_direct_tcpip`'s on_done(user, status, message), called exactly once after the
    /// stream's socket was closed; message is borrowed for the call. [session]
    public typealias SpliceDoneCallback = @convention(c) (UnsafeMutableRawPointer?, termhost_status, UnsafePointer<CChar>?) -> Void

    /// The user pointer handed to a callback; the callback knows what it points at (typically
    /// an `Unmanaged` object the caller retained for as long as the header says it is borrowed).
    public struct CallbackData: @unchecked Sendable {
        public let raw: UnsafeMutableRawPointer
        public init(raw: UnsafeMutableRawPointer) { self.raw = raw }
    }

    /// Whether the SSH plugin reports connection loss (`watch`, ABI 1.1). [any-thread]
    public var offersWatch: Bool { TermhostStruct.member(vtable, \.watch) != nil }

    /// Whether the SSH plugin joins accepted sockets to channels itself (`splice_direct_tcpip`
    /// and `end_spliced`, ABI 1.1). [any-thread]
    public var offersSplice: Bool {
        TermhostStruct.member(vtable, \.splice_direct_tcpip) != nil && TermhostStruct.member(vtable, \.end_spliced) != nil
    }
}

extension SSHTransport.Connection {
    /// `forward_listen`: the server listens on bindHost:port, like `ssh -R` (port 0 lets it
    /// choose); returns the port it listens on. `onAccept` runs for each connection it accepts
    /// until `cancelForward` or `close`. [any-thread; onAccept on the connection's executor]
    public func forwardListen(bindHost: String, port: Int32, onAccept: SSHTransport.AcceptCallback,
                              user: SSHTransport.CallbackData) throws(PluginError) -> Int32 {
        var bound: Int32 = 0
        try check { vtable.pointee.forward_listen(handle, bindHost, port, &bound, onAccept, user.raw, $0) }
        return bound
    }

    /// `cancel_forward`: stops the listener on `port`; connections already accepted go on.
    /// [any-thread]
    public func cancelForward(port: Int32) throws(PluginError) {
        try check { vtable.pointee.cancel_forward(handle, port, $0) }
    }

    /// `watch` (ABI 1.1): `onLost` runs at most once, on the connection's executor, when the
    /// connection dies (keepalive, socket error, server disconnect); `user` is borrowed until
    /// it has run or `close()` has returned. TERMHOST_ERR_IO when the connection is already
    /// lost; TERMHOST_ERR_UNSUPPORTED against an older SSH plugin. [any-thread]
    public func watch(onLost: SSHTransport.LostCallback, user: SSHTransport.CallbackData) throws(PluginError) {
        guard let watch = TermhostStruct.member(vtable, \.watch) else {
            throw PluginError("ssh: the SSH plugin predates ABI 1.1: it cannot report connection loss (watch)",
                              code: Int32(TERMHOST_ERR_UNSUPPORTED))
        }
        try check { watch(handle, onLost, user.raw, $0) }
    }

    /// `splice_direct_tcpip` (ABI 1.1): `fd` (an accepted client) is the SSH plugin's from this
    /// call on, whatever the outcome, joined to a channel to host:port once it opens. `initial`
    /// (at most 65536 bytes) goes to the channel first. `onDone` runs exactly once, on the
    /// connection's executor, when the stream ended or could not run; `user` is borrowed until
    /// then. Returns the stream's id for `endSplice`. A thrown error means `onDone` never comes.
    /// TERMHOST_ERR_UNSUPPORTED (fd closed) against an older SSH plugin.
    /// [any-thread, non-blocking]
    public func splice(host: String, port: Int32, fd: Int32, initial: [UInt8] = [], onDone: SSHTransport.SpliceDoneCallback,
                       user: SSHTransport.CallbackData) throws(PluginError) -> UInt64 {
        guard let splice = TermhostStruct.member(vtable, \.splice_direct_tcpip) else {
            Glibc.close(fd)
            throw PluginError("ssh: the SSH plugin predates ABI 1.1: it cannot join a socket to a channel (splice_direct_tcpip)",
                              code: Int32(TERMHOST_ERR_UNSUPPORTED))
        }
        var stream: UInt64 = 0
        try check { err in
            // NULL for no initial bytes, as the header has it (the usual -L stream).
            initial.isEmpty ? splice(handle, host, port, fd, nil, 0, onDone, user.raw, &stream, err)
                : initial.withUnsafeBytes { splice(handle, host, port, fd, $0.baseAddress, $0.count, onDone, user.raw, &stream, err) }
        }
        return stream
    }

    /// `end_spliced` (ABI 1.1): ends a spliced stream now; its `onDone` follows with
    /// TERMHOST_OK. An ended or unknown stream, or an SSH plugin without splices, is ignored.
    /// [any-thread, non-blocking]
    public func endSplice(_ stream: UInt64) {
        TermhostStruct.member(vtable, \.end_spliced)?(handle, stream)
    }
}
