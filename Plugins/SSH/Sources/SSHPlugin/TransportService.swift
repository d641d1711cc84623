import CLibSSH2
import CTermhost
import Foundation
import Synchronization
import TermhostSDK

/// The service other plugins use instead of reimplementing SSH
/// (SDK/include/termhost/ssh/transport.h, "org.termhost.ssh.transport/1").
///
/// A handle: one caller's use of a connection (TransportLink), which it may share with other
/// handles. Every libssh2 call runs on the link's executor, so one session never has two
/// callers; what the handle opens (bridges, listeners, watches) carries its `owner` id, and
/// its close ends those only, unless it is the link's last handle.
final class TransportConnection: Sendable {
    let link: TransportLink
    /// The SSH feature instance that opened it: its shutdown closes what callers left open.
    let provider: TransportProvider
    /// Tags what this handle opened on the link's bridges; never 0 (0 is nobody's).
    let owner: UInt64
    /// Set on the executor when close() ended this handle: a call that found the handle just
    /// before must not touch what it owned (or, for the last handle, the freed session).
    private let ended = Atomic<Bool>(false)

    private static let owners = Atomic<UInt64>(0)

    init(_ link: TransportLink, provider: TransportProvider) {
        self.link = link
        self.provider = provider
        owner = TransportConnection.owners.add(1, ordering: .relaxed).newValue
    }

    var connection: SSHConnection { link.connection }
    var executor: DispatchQueue { link.executor }
    var bridges: ChannelBridges { link.bridges }
    /// Whether close() ended this handle. [executor]
    var closed: Bool {
        get { ended.load(ordering: .relaxed) }
        set { ended.store(newValue, ordering: .relaxed) }
    }
}

enum TransportService {
    /// The handles callers hold: generation tokens, so one kept after close() (or a stray one)
    /// gets TERMHOST_ERR_NOT_FOUND instead of touching freed memory or a newer connection.
    static let handles = HandleTable<TransportConnection>()

    static func closed(_ err: UnsafeMutablePointer<termhost_error_t>?) -> termhost_status {
        termhostFail(err, TERMHOST_ERR_NOT_FOUND, "no such SSH connection: it was closed, or the handle is not one open() returned")
    }

    /// Runs body on the connection's executor, waking its pass loop first so the call does not
    /// wait out a poll() timeout, and finishing any half-sent packet before body sends its own.
    /// `opensChannel`: body may open a channel, so the channel opens queued on the connection
    /// (any handle's) are finished first; a body that only moves data on channels it has
    /// (an exec's step, a close) leaves them in progress.
    static func onExecutor<T>(_ c: TransportConnection, opensChannel: Bool = true, _ body: () -> T) -> T {
        ExecutorCheck.offExecutor(c.executor)
        c.bridges.approach()
        return c.executor.sync {
            BulkCipher.during {
                c.bridges.arrived()
                // A packet a bridge left half sent must go first (libssh2 1.10 refuses any other).
                c.bridges.flushPending(opens: opensChannel)
                return body()
            }
        }
    }

    /// TERMHOST_ERR_IO with the reason, when `watch` saw the connection die. [executor]
    static func lostStatus(_ c: TransportConnection, _ err: UnsafeMutablePointer<termhost_error_t>?) -> termhost_status? {
        c.bridges.lost.map { termhostFail(err, TERMHOST_ERR_IO, $0) }
    }

    /// Closes in progress: the plugin's shutdown waits for them, so the process never exits
    /// (and tears libcrypto down) while a close is still inside libssh2.
    static let closing = DispatchGroup()

    /// Ends a handle already out of the handle table; the caller counts it in `closing`. The
    /// link's last handle frees the connection, or keeps it for the next open to its
    /// destination; any other ends only what it opened.
    private static func close(_ c: TransportConnection) {
        let last = LiveLinks.shared.release(c.link)
        onExecutor(c, opensChannel: last) {
            defer { c.closed = true }
            guard last else { return c.bridges.endOwned(by: c.owner) }
            // A connection that did not die is kept (asked before closeAll, which marks every
            // connection it ends as lost); not one with a channel open libssh2 began and the
            // server never answered, which the next user's open would run into.
            let alive = c.bridges.lost == nil && c.connection.sessionContext.disconnect == nil && !c.bridges.openInProgress
            c.bridges.closeAll()
            if let kept = c.link.kept, alive {
                ConnectionPool.shared.keep(c.connection, kept.key, seconds: kept.seconds)
            } else {
                c.connection.teardown()
            }
        }
    }

    /// A handle on a live shared link to `key` (checked alive on its executor), or nil.
    static func join(_ key: ConnectionPool.Key, provider: TransportProvider) -> TransportConnection? {
        while let link = LiveLinks.shared.join(key) {
            let c = TransportConnection(link, provider: provider)
            // A channel open of another user's still under way: this caller could not open one
            // there now (nil), so it connects on its own.
            let usable: Bool? = onExecutor(c) { c.bridges.openInProgress ? nil : c.bridges.provesAlive() }
            if usable == true {
                provider.host.log(.debug, "ssh: sharing the connection to \(c.connection.hostLabel) (\(LiveLinks.shared.users(of: link)) users)")
                return c
            }
            if usable == false {
                provider.host.log(.info, "ssh: a shared connection to \(c.connection.hostLabel) is no longer usable; connecting anew")
                link.gone.store(true, ordering: .relaxed)
            }
            closing.enter()
            close(c)
            closing.leave()
            if usable == nil { return nil }
        }
        return nil
    }

    /// A handle on a connection to the destination `kept` names: in the daemon, with `shared`,
    /// a handle on a live shared link to it (checked alive on its executor first); else a new
    /// link over a connection kept idle there (ConnectionPool) or one `connect` makes.
    static func handle<E: Error>(provider: TransportProvider, kept: (key: ConnectionPool.Key, seconds: Int)?, shared: Bool,
                                 connect: () throws(E) -> SSHConnection) throws(E) -> TransportConnection {
        if shared, let key = kept?.key, let joined = join(key, provider: provider) { return joined }
        let reused = kept.flatMap { ConnectionPool.shared.take($0.key, reserve: false, log: provider.host) }
        let connection: SSHConnection
        if let reused { connection = reused } else { connection = try connect() }
        let link = TransportLink(connection, kept: kept, shared: shared)
        LiveLinks.shared.add(link)
        return TransportConnection(link, provider: provider)
    }

    /// Queues a channel open for the handle `c`; one whose handle closed meanwhile fails
    /// instead (its owner's things are gone). [executor]
    static func enqueue(_ open: ChannelBridges.PendingOpen, on c: TransportConnection) {
        if c.closed { return open.fail(SSHError("ssh: the handle on the connection to \(c.connection.shownAddress) was closed")) }
        c.bridges.enqueue(open)
    }

    /// TERMHOST_ERR_IO for work that would open a channel while another's open is under way
    /// (ChannelBridges.openInProgress). [executor]
    static func busyStatus(_ c: TransportConnection, _ err: UnsafeMutablePointer<termhost_error_t>?) -> termhost_status? {
        c.bridges.openBusy.map { termhostFail(err, TERMHOST_ERR_IO, $0) }
    }

    /// The "closed" error when close() freed the session meanwhile. [executor]
    static func closedStatus(_ c: TransportConnection, _ err: UnsafeMutablePointer<termhost_error_t>?) -> termhost_status? {
        c.closed ? closed(err) : nil
    }

    /// At the plugin's shutdown: closes what callers left open (a disconnect the server sees,
    /// not a dropped socket) and waits, at most `bound` seconds, for every close to finish.
    static func closeAll(of provider: TransportProvider, bound: Double) {
        let left = handles.removeAll { $0.provider === provider }
        if !left.isEmpty { provider.host.log(.info, "closing \(left.count) SSH connection(s) other plugins left open") }
        for c in left { DispatchQueue.global().async(group: closing) { close(c) } }
        if closing.wait(timeout: .now() + bound) == .timedOut {
            provider.host.log(.warning, "SSH connections still closing after \(bound) s; exiting without them")
        }
    }

    /// The entry points, shared by every instance; each instance's TransportProvider copies
    /// this and fills `context` (host.h, "Provider context").
    static var template: termhost_ssh_transport_t {
        termhost_ssh_transport_t(
            struct_size: UInt32(MemoryLayout<termhost_ssh_transport_t>.size),
            open: { caller, scene, destination, out, err in
                TransportService.open(caller, scene: scene, destination, flags: 0, out, err, entry: "open")
            },
            close: { raw in
                // Counted before the handle leaves the table, so closeAll() either finds the
                // connection or waits for this close.
                TransportService.closing.enter()
                defer { TransportService.closing.leave() }
                guard let c = TransportService.handles.remove(raw) else { return }
                TransportService.close(c)
            },
            exec: { raw, command, stdinData, stdinSize, onStdout, onStderr, user, status, err in
                guard let command else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "exec: NULL command") }
                guard let c = TransportService.handles.lookup(raw) else { return TransportService.closed(err) }
                let input = stdinData.map { Array(UnsafeRawBufferPointer(start: $0, count: stdinSize)) } ?? []
                // Since 1.2 the same stepped channel as exec_bounded, without deadline or cancel:
                // a long command no longer holds the connection's other traffic.
                let r = TransportService.runExec(c, command: String(cString: command), input: input, deadlineMS: 0, cancel: nil,
                                                 output: { stream, data in
                                                     _ = (stream == 0 ? onStdout : onStderr).map { $0(user, data.baseAddress, data.count) }
                                                 }, err: err)
                if r.status == Int32(TERMHOST_OK) { status?.pointee = r.exitStatus }
                return r.status
            },
            with_session: { raw, body, user, err in
                guard let body else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "with_session: NULL body") }
                guard let c = TransportService.handles.lookup(raw) else { return TransportService.closed(err) }
                return TransportService.onExecutor(c) {
                    if let s = TransportService.closedStatus(c, err) { return s }
                    // The body may open channels (SFTP does).
                    if let s = TransportService.busyStatus(c, err) { return s }
                    libssh2_session_set_blocking(c.connection.session, 1)
                    return body(user, UnsafeMutableRawPointer(c.connection.session), c.connection.socket, err)
                }
            },
            open_direct_tcpip: { raw, host, port, fd, err in
                guard let host, let fd else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "open_direct_tcpip: NULL argument") }
                guard let c = TransportService.handles.lookup(raw) else { return TransportService.closed(err) }
                // Queued on the pass loop and awaited here, off the executor: while the server
                // connects to the target, the connection's other channels keep moving.
                let open = ChannelBridges.PendingOpen(host: String(cString: host), port: port, owner: c.owner)
                c.executor.async { TransportService.enqueue(open, on: c) }
                c.bridges.wake()
                open.done.wait()
                switch open.result {
                case .success(let channelFD)?:
                    fd.pointee = channelFD
                    return Int32(TERMHOST_OK)
                case .failure(let error)?:
                    return termhostFail(err, TERMHOST_ERR_IO, error.message)
                case nil:
                    return termhostFail(err, TERMHOST_ERR_INTERNAL, "open_direct_tcpip: no result")
                }
            },
            open_shell: { raw, term, columns, rows, fd, err in
                guard let fd else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "open_shell: NULL fd") }
                guard let c = TransportService.handles.lookup(raw) else { return TransportService.closed(err) }
                let terminal = term.map { String(cString: $0) } ?? "xterm-256color"
                return TransportService.onExecutor(c) { () -> termhost_status in
                    if let s = TransportService.closedStatus(c, err) { return s }
                    if let s = TransportService.busyStatus(c, err) { return s }
                    do {
                        let channel = try c.connection.openSessionChannel()
                        guard libssh2_channel_request_pty_ex(channel, terminal, UInt32(terminal.utf8.count), nil, 0,
                                                             max(columns, 1), max(rows, 1), 0, 0) == 0,
                              libssh2_channel_process_startup(channel, "shell", 5, nil, 0) == 0 else {
                            let reason = c.connection.lastError()
                            libssh2_channel_free(channel)
                            return termhostFail(err, TERMHOST_ERR_IO, "ssh: the server refused a shell on a terminal: \(reason)")
                        }
                        fd.pointee = try c.bridges.bridge(channel, isShell: true, owner: c.owner)
                        return Int32(TERMHOST_OK)
                    } catch {
                        return termhostFail(err, TERMHOST_ERR_IO, "\(error)")
                    }
                }
            },
            resize_shell: { raw, fd, columns, rows, err in
                guard let c = TransportService.handles.lookup(raw) else { return TransportService.closed(err) }
                return TransportService.onExecutor(c) { () -> termhost_status in
                    guard let channel = c.bridges.shell(callerFD: fd, owner: c.owner) else {
                        return termhostFail(err, TERMHOST_ERR_NOT_FOUND, "no shell of this connection has local end \(fd)")
                    }
                    guard libssh2_channel_request_pty_size_ex(channel, max(columns, 1), max(rows, 1), 0, 0) == 0 else {
                        return termhostFail(err, TERMHOST_ERR_IO, "window change failed: \(c.connection.lastError())")
                    }
                    return Int32(TERMHOST_OK)
                }
            },
            forward_listen: { raw, bindHost, port, boundPort, onAccept, user, err in
                guard let onAccept else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "forward_listen: NULL on_accept") }
                guard let c = TransportService.handles.lookup(raw) else { return TransportService.closed(err) }
                let host = bindHost.map { String(cString: $0) } ?? "localhost"
                return TransportService.onExecutor(c) { () -> termhost_status in
                    if let s = TransportService.closedStatus(c, err) { return s }
                    if let lost = TransportService.lostStatus(c, err) { return lost }
                    var bound: Int32 = 0
                    guard let listener = libssh2_channel_forward_listen_ex(c.connection.session, host, port, &bound, 16) else {
                        return termhostFail(err, TERMHOST_ERR_IO,
                                                     "ssh: \(c.connection.destination.address) refused to listen on \(host) port \(port): \(c.connection.lastError())")
                    }
                    let actual = port == 0 ? bound : port
                    boundPort?.pointee = actual
                    c.bridges.addListener(.init(listener: listener, port: actual, onAccept: onAccept, user: user, owner: c.owner))
                    return Int32(TERMHOST_OK)
                }
            },
            cancel_forward: { raw, port, err in
                guard let c = TransportService.handles.lookup(raw) else { return TransportService.closed(err) }
                return TransportService.onExecutor(c) { () -> termhost_status in
                    guard let listener = c.bridges.removeListener(port: port, owner: c.owner) else {
                        return termhostFail(err, TERMHOST_ERR_NOT_FOUND, "no remote forward on port \(port)")
                    }
                    libssh2_channel_forward_cancel(listener)
                    return Int32(TERMHOST_OK)
                }
            },
            watch: { raw, onLost, user, err in
                guard let onLost else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "watch: NULL on_lost") }
                guard let c = TransportService.handles.lookup(raw) else { return TransportService.closed(err) }
                return TransportService.onExecutor(c) { () -> termhost_status in
                    if let s = TransportService.closedStatus(c, err) { return s }
                    if c.bridges.sentinel == nil, let s = TransportService.busyStatus(c, err) { return s }
                    do throws(SSHError) { try c.bridges.watch(.init(onLost: onLost, user: user, owner: c.owner)) } catch {
                        return termhostFail(err, TERMHOST_ERR_IO, error.message)
                    }
                    return Int32(TERMHOST_OK)
                }
            },
            open_exec: { raw, command, fd, err in
                guard let command, let fd else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "open_exec: NULL argument") }
                guard let c = TransportService.handles.lookup(raw) else { return TransportService.closed(err) }
                let text = String(cString: command)
                return TransportService.onExecutor(c) { () -> termhost_status in
                    if let s = TransportService.closedStatus(c, err) { return s }
                    if let lost = TransportService.lostStatus(c, err) { return lost }
                    if let s = TransportService.busyStatus(c, err) { return s }
                    do {
                        let channel = try c.connection.openSessionChannel()
                        do throws(SSHError) { try c.connection.startCommand(text, on: channel) } catch {
                            libssh2_channel_free(channel)
                            return termhostFail(err, TERMHOST_ERR_IO, error.message)
                        }
                        fd.pointee = try c.bridges.bridge(channel, isShell: false, owner: c.owner)
                        return Int32(TERMHOST_OK)
                    } catch {
                        return termhostFail(err, TERMHOST_ERR_IO, "\(error)")
                    }
                }
            },
            splice_direct_tcpip: { raw, host, port, fd, initial, initialSize, onDone, user, stream, err in
                guard let host, let onDone, fd >= 0, initialSize <= 65536, initial != nil || initialSize == 0 else {
                    if fd >= 0 { Glibc.close(fd) }
                    return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT,
                                                 "splice_direct_tcpip: NULL host or on_done, a negative fd, or more than 65536 initial bytes")
                }
                guard let c = TransportService.handles.lookup(raw) else {
                    Glibc.close(fd)
                    return TransportService.closed(err)
                }
                let bytes = initial.map { Array(UnsafeRawBufferPointer(start: $0, count: initialSize)) } ?? []
                let id = c.bridges.newStream()
                let splice = ChannelBridges.Splice(fd: fd, initial: bytes, stream: id) { status, message in
                    message.withCString { onDone(user, status, $0) }
                }
                let open = ChannelBridges.PendingOpen(host: String(cString: host), port: port, owner: c.owner, splice: splice)
                stream?.pointee = id
                c.executor.async { TransportService.enqueue(open, on: c) }
                c.bridges.wake()
                return Int32(TERMHOST_OK)
            },
            end_spliced: { raw, stream in
                guard let c = TransportService.handles.lookup(raw) else { return }
                c.executor.async { c.bridges.endSplice(stream, owner: c.owner) }
                c.bridges.wake()
            },
            context: nil,
            exec_bounded: { raw, command, stdinData, stdinSize, onStdout, onStderr, user, deadline, cancel, status, err in
                guard let command, stdinData != nil || stdinSize == 0 else {
                    return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "exec_bounded: NULL command, or NULL stdin_data with a non-zero stdin_size")
                }
                guard let c = TransportService.handles.lookup(raw) else { return TransportService.closed(err) }
                let input = stdinData.map { Array(UnsafeRawBufferPointer(start: $0, count: stdinSize)) } ?? []
                let r = TransportService.runExec(c, command: String(cString: command), input: input, deadlineMS: deadline, cancel: cancel,
                                                 output: { stream, data in
                                                     _ = (stream == 0 ? onStdout : onStderr).map { $0(user, data.baseAddress, data.count) }
                                                 }, err: err)
                if r.status == Int32(TERMHOST_OK) { status?.pointee = r.exitStatus }
                return r.status
            },
            open_saved: { caller, name, out, err in
                TransportService.open(caller, scene: 0, name, flags: UInt32(TERMHOST_SSH_OPEN_SAVED), out, err, entry: "open_saved")
            },
            open_with: { caller, scene, destination, flags, out, err in
                TransportService.open(caller, scene: scene, destination, flags: flags, out, err, entry: "open_with")
            })
    }
}
