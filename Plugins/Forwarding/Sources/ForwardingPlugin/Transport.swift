import CTermhost
import TermhostSDK

/// A connection handle from `open`: opaque, never dereferenced, valid across threads (the
/// service runs every call on the connection's executor and rejects closed handles).
struct Connection: @unchecked Sendable, Equatable {
    let raw: OpaquePointer
}

/// User data handed to a C callback; the receiver knows what it points at.
struct CallbackData: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer
}

/// The SSH plugin's transport service ("org.termhost.ssh.transport/1", ssh/transport.h) as this
/// plugin uses it. Every call but `splice` and `endSplice` blocks until the connection's
/// executor has done the work, so callers run those off the reactor thread.
struct Transport: @unchecked Sendable {
    let host: PluginHost
    let vtable: UnsafePointer<termhost_ssh_transport_t>

    /// Why a call failed. `denied`: the host key or the credentials were refused, or a prompt
    /// could not be shown; retrying without a change cannot help.
    struct Failure: Error, CustomStringConvertible {
        let denied: Bool
        let message: String
        var description: String { message }
    }

    init?(host: PluginHost) {
        guard let raw = host.service(TERMHOST_SSH_TRANSPORT) else { return nil }
        self.host = host
        vtable = raw.assumingMemoryBound(to: termhost_ssh_transport_t.self)
    }

    /// Whether the SSH plugin's table reaches an appended entry (struct_size) and fills it.
    private func offers<V>(_ field: KeyPath<termhost_ssh_transport_t, V>) -> Bool {
        TermhostStruct.has(UnsafePointer(vtable), field)
    }

    /// Whether the SSH plugin is new enough to report connection loss (`watch`).
    var canWatch: Bool { offers(\termhost_ssh_transport_t.watch) && vtable.pointee.watch != nil }

    /// Whether the SSH plugin joins accepted sockets to channels itself (`splice_direct_tcpip`).
    var canSplice: Bool {
        offers(\termhost_ssh_transport_t.end_spliced) && vtable.pointee.splice_direct_tcpip != nil && vtable.pointee.end_spliced != nil
    }

    private func run(_ body: (UnsafeMutablePointer<termhost_error_t>) -> termhost_status) throws(Failure) {
        var err = termhostEmptyError()
        let rc = body(&err)
        guard rc == Int32(TERMHOST_OK) else {
            throw Failure(denied: rc == Int32(TERMHOST_ERR_DENIED), message: termhostErrorMessage(err))
        }
    }

    /// `open`: connect, verify and authenticate. Scene 0 fails closed on any prompt.
    func open(_ destination: String, scene: UInt64) throws(Failure) -> Connection {
        var out: OpaquePointer?
        try run { vtable.pointee.open(host.raw, scene, destination, &out, $0) }
        return Connection(raw: out!)
    }

    func close(_ connection: Connection) { vtable.pointee.close(connection.raw) }

    /// `open_direct_tcpip`: the caller's end of a bridged socket to host:port as the server sees it.
    func openDirect(_ connection: Connection, host target: String, port: Int) throws(Failure) -> Int32 {
        var fd: Int32 = -1
        try run { vtable.pointee.open_direct_tcpip(connection.raw, target, Int32(port), &fd, $0) }
        return fd
    }

    typealias DoneCallback = @convention(c) (UnsafeMutableRawPointer?, termhost_status, UnsafePointer<CChar>?) -> Void

    /// `splice_direct_tcpip`: fd (an accepted client) is the SSH plugin's from now on, joined to
    /// a channel to host:port once it opens; onDone runs once, on the connection's executor,
    /// when the stream ends. Does not block. Returns the stream's id for `endSplice`.
    func splice(_ connection: Connection, host target: String, port: Int, fd: Int32, onDone: DoneCallback,
                user: CallbackData) throws(Failure) -> UInt64 {
        var stream: UInt64 = 0
        try run { vtable.pointee.splice_direct_tcpip(connection.raw, target, Int32(port), fd, nil, 0, onDone, user.raw, &stream, $0) }
        return stream
    }

    /// `end_spliced`: the stream's channel and client socket close; its onDone follows. Does not block.
    func endSplice(_ connection: Connection, _ stream: UInt64) { vtable.pointee.end_spliced(connection.raw, stream) }

    typealias AcceptCallback = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, Int32) -> Void
    typealias LostCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void

    /// `forward_listen`: returns the port the server listens on.
    func listen(_ connection: Connection, bindHost: String, port: Int, onAccept: AcceptCallback,
                user: CallbackData) throws(Failure) -> Int {
        var bound: Int32 = 0
        try run { vtable.pointee.forward_listen(connection.raw, bindHost, Int32(port), &bound, onAccept, user.raw, $0) }
        return Int(bound)
    }

    func cancelForward(_ connection: Connection, port: Int) {
        var err = termhostEmptyError()
        _ = vtable.pointee.cancel_forward(connection.raw, Int32(port), &err)
    }

    /// `watch`: onLost runs once, on the connection's executor, when the connection dies.
    func watch(_ connection: Connection, onLost: LostCallback, user: CallbackData) throws(Failure) {
        guard canWatch else { throw Failure(denied: false, message: "the SSH plugin is too old to report connection loss (no watch in its transport service)") }
        try run { vtable.pointee.watch(connection.raw, onLost, user.raw, $0) }
    }
}
