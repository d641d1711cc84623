import CLibSSH2
import CTermhost
import Foundation
import LibSSH2
import Synchronization
import TermhostSDK

/// One persistent terminal session (SDK/include/termhost/ssh/sessions.h): a shell on a PTY
/// whose output goes to a ring buffer and to every attached sink, and whose input comes from
/// any of them. Its own thread runs the channel (ChannelPump); nothing else touches libssh2.
///
/// Ordering, the reason for one lock: output is appended to the ring and handed to the sinks
/// under `state`'s lock, and attach takes the same lock to copy the ring and add its sink, so
/// an attaching client gets every byte exactly once: in the replay or live, never both or
/// neither. Sinks only copy (ssh/sessions.h says so), so holding the lock through them is short.
final class PersistentSession: Sendable {
    /// A consumer's sink (termhost_ssh_session_sink_t). `user` is kept as its bit pattern: to
    /// this plugin it is a token handed back, never memory it reads.
    struct Sink: Sendable {
        let output: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, Int) -> Void
        let event: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int) -> Void
        let closed: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void
        let user: UInt

        private var pointer: UnsafeMutableRawPointer? { UnsafeMutableRawPointer(bitPattern: user) }
        func send(_ bytes: UnsafeRawBufferPointer) { output(pointer, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count) }
        func send(event json: String) { json.utf8CString.withUnsafeBufferPointer { event(pointer, $0.baseAddress, $0.count - 1) } }
        func close(_ reason: String) { reason.withCString { closed(pointer, $0) } }
    }

    /// The soft reset every replay starts with: whatever colours the ring's first bytes
    /// assume, the client's terminal starts from plain text.
    static let softReset: [UInt8] = [0x1B, 0x5B, 0x30, 0x6D]
    /// Events kept per session; older ones are dropped first.
    static let maxEvents = 200
    /// Output within this many seconds makes the session "working".
    static let workingSeconds = 5.0
    /// Input accepted but not yet sent, beyond which write() is refused (BUSY).
    static let maxPendingInput = 1 << 20
    /// Linux's F_SETPIPE_SZ and F_GETPIPE_SZ (fcntl.h declares them only under _GNU_SOURCE).
    static let setPipeSize: Int32 = 1031
    static let getPipeSize: Int32 = 1032

    /// The waits between reconnect attempts, in seconds (the last repeats); back to the first
    /// once a connection has stayed up for `stableSeconds`.
    static let reconnectDelays: [Double] = [1, 2, 5, 10, 30]
    static let stableSeconds = 60.0

    let id: String
    let host: String
    let user: String
    let started: Double
    let remoteTmux: Bool
    private let term: String
    /// Connects again (resolving, trusting and authenticating without prompts, as open did).
    private let connect: @Sendable () throws(SSHError) -> SSHConnection
    /// Input travels to the session's thread through this pipe (its read end is the pump's
    /// stdin), so a write from any thread never touches libssh2.
    private let inputRead: Int32
    private let inputWrite: Int32
    private let inputLock = Mutex(())
    /// Called once on the session's thread after it ended, with the shell's status (255 when
    /// it was killed).
    private let onEnd: @Sendable (Int32) -> Void
    private let log: @Sendable (String) -> Void

    private struct State {
        var ring: SessionRing
        var scanner = TerminalEventScanner()
        var sinks: [UInt64: Sink] = [:]
        var events: [(at: Double, json: String)] = []
        var lastOutputAt: Double? = nil
        var columns: Int
        var rows: Int
        var resizePending = false
        /// The live connection's socket, -1 while reconnecting: kill() shuts it down under this
        /// lock, and the session's thread clears it under the lock before closing it.
        var socket: Int32 = -1
        var ended: (at: Double, reason: String)? = nil
        var killed = false
        /// The assistant's Asks on this session's host that wait for an answer (ApprovalWatch),
        /// by id, with when each expires: one whose decision never came counts no longer.
        var pendingApprovals: [Int: Double] = [:]
        /// Asks decided before this session heard them wait (a seed racing the decision): their
        /// late "pending" is not news. The newest few only.
        var decidedApprovals: [Int] = []
    }
    private let state: Mutex<State>
    /// Signalled by kill(): ends a wait between reconnect attempts at once.
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// A session on `connection` (authenticated already): its shell is started here, on the
    /// caller's thread, so a refusal is the caller's error; then the session's thread owns the
    /// connection. When this throws, the caller still owns the connection. With no connection
    /// (a session a previous daemon left, restored) the thread connects, with the same waits
    /// as a reconnect.
    init(id: String, host: String, user: String, started: Double = Date().timeIntervalSince1970,
         connection: SSHConnection?, connect: @escaping @Sendable () throws(SSHError) -> SSHConnection,
         columns: Int, rows: Int, term: String, remoteTmux: Bool, ringBytes: Int,
         log: @escaping @Sendable (String) -> Void, onEnd: @escaping @Sendable (Int32) -> Void) throws(SSHError) {
        self.id = id
        self.host = host
        self.user = user
        self.started = started
        self.remoteTmux = remoteTmux
        self.term = term
        self.connect = connect
        self.onEnd = onEnd
        self.log = log
        let shell = try connection.map { (c) throws(SSHError) in
            try SessionShell.start(on: c, id: id, term: term, columns: columns, rows: rows, remoteTmux: remoteTmux, log: log)
        }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            if let shell { libssh2_channel_free(shell.channel) }
            throw SSHError("ssh: pipe: \(String(cString: strerror(errno)))")
        }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        // Room for the whole input bound (the kernel may give less; write() then waits briefly).
        _ = fcntl(fds[1], PersistentSession.setPipeSize, Int32(PersistentSession.maxPendingInput))
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        inputRead = fds[0]
        inputWrite = fds[1]
        state = Mutex(State(ring: SessionRing(capacity: ringBytes), columns: columns, rows: rows, socket: connection?.socket ?? -1))
        record(connection == nil ? "{\"kind\":\"restored\"" : "{\"kind\":\"opened\"")
        if let shell, remoteTmux, !shell.inTmux { announceNoTmux() }
        // Handed to the session's thread, which alone uses them from here on.
        nonisolated(unsafe) let owned = connection.map { ($0, shell!) }
        let thread = Thread { [self] in run(owned) }
        thread.name = "termhost-ssh-session-\(id)"
        thread.start()
    }

    deinit {
        close(inputRead)
        close(inputWrite)
    }

    // MARK: the session's thread

    private func run(_ first: (SSHConnection, SessionShell)?) {
        var live = first
        var attempt = 0
        var connectedAt = Date().timeIntervalSince1970
        var status: Int32 = 255
        while true {
            if live == nil {
                guard let next = reconnect(&attempt) else { break }   // killed meanwhile
                live = next
                connectedAt = Date().timeIntervalSince1970
            }
            let (connection, shell) = live!
            do {
                status = try pump(connection, shell)
                retire(connection, shell)
                if end("{\"kind\":\"exit\",\"status\":\(status)", reason: "the shell exited with status \(status)") { onEnd(status) }
                finished.signal()
                return
            } catch {
                retire(connection, shell)
                live = nil
                if state.withLock({ $0.killed }) { break }
                if Date().timeIntervalSince1970 - connectedAt >= PersistentSession.stableSeconds { attempt = 0 }
                let wait = PersistentSession.reconnectDelays[min(attempt, PersistentSession.reconnectDelays.count - 1)]
                record("{\"kind\":\"disconnected\",\"reason\":\(JSONText.quoted(error.message)),\"retryInSeconds\":\(Int(wait))")
                notice("the connection to \(host) was lost (\(error.message)); reconnecting in \(Int(wait)) s")
                log("persistent session \(id): \(error.message); reconnecting in \(Int(wait)) s")
            }
        }
        if end("{\"kind\":\"exit\",\"killed\":true", reason: "killed") { onEnd(255) }
        finished.signal()
    }

    /// Moves bytes until the shell ends (its status) or the connection fails (thrown).
    private func pump(_ connection: SSHConnection, _ shell: SessionShell) throws(SSHError) -> Int32 {
        var pump = ChannelPump(connection: connection, channel: shell.channel)
        pump.agent = shell.agent
        state.withLock { $0.resizePending = true }   // a new PTY gets the latest size at once
        pump.onPass = { [self] channel in
            let size: (Int, Int)? = state.withLock { s in
                guard s.resizePending else { return nil }
                return (s.columns, s.rows)
            }
            guard let (columns, rows) = size else { return }
            let rc = libssh2_channel_request_pty_size_ex(channel, Int32(columns), Int32(rows), 0, 0)
            if LibSSH2.wouldBlock(rc) { return }   // asked again on the next pass
            // Only the size asked for is done: a newer one set meanwhile stays pending.
            state.withLock { s in if s.columns == columns && s.rows == rows { s.resizePending = false } }
        }
        return try pump.run(input: .descriptor(inputRead)) { [self] _, data in deliver(data) }
    }

    /// Frees the channel and the connection; the socket leaves `state` first, so kill() never
    /// shuts down a descriptor number that was closed and reused.
    private func retire(_ connection: SSHConnection, _ shell: SessionShell) {
        state.withLock { $0.socket = -1 }
        libssh2_channel_free(shell.channel)
        connection.teardown()
    }

    /// Waits, connects and starts the shell again, until it works or the session is killed.
    private func reconnect(_ attempt: inout Int) -> (SSHConnection, SessionShell)? {
        while true {
            let wait = PersistentSession.reconnectDelays[min(attempt, PersistentSession.reconnectDelays.count - 1)]
            attempt += 1
            _ = wake.wait(timeout: .now() + wait)
            if state.withLock({ $0.killed }) { return nil }
            var connection: SSHConnection? = nil
            do {
                let c = try connect()
                connection = c
                let (columns, rows) = state.withLock { ($0.columns, $0.rows) }
                let shell = try SessionShell.start(on: c, id: id, term: term, columns: columns, rows: rows, remoteTmux: remoteTmux, log: log)
                // Typed while the connection was down: not sent to what may be another shell.
                var queued: Int32 = 0
                var drain = [UInt8](repeating: 0, count: 65_536)
                while ioctl(inputRead, UInt(FIONREAD), &queued) == 0, queued > 0,
                      read(inputRead, &drain, min(drain.count, Int(queued))) > 0 {}
                let killed = state.withLock { s -> Bool in
                    if !s.killed { s.socket = c.socket }
                    return s.killed
                }
                if killed {
                    retire(c, shell)
                    return nil
                }
                record("{\"kind\":\"reconnected\",\"shell\":\"\(shell.inTmux ? "tmux" : "new")\"")
                if shell.inTmux {
                    notice("reconnected to \(host); back in remote tmux session \(SessionShell.tmuxSession(id))")
                } else if remoteTmux {
                    announceNoTmux()
                } else {
                    notice("reconnected to \(host): this is a new shell; the one before ended with the connection ('ssh --persist --remote-tmux' keeps it)")
                }
                log("persistent session \(id): reconnected")
                return (c, shell)
            } catch {
                connection?.teardown()
                let next = PersistentSession.reconnectDelays[min(attempt, PersistentSession.reconnectDelays.count - 1)]
                record("{\"kind\":\"reconnect-failed\",\"reason\":\(JSONText.quoted(error.message)),\"retryInSeconds\":\(Int(next))")
                notice("reconnecting to \(host) failed (\(error.message)); trying again in \(Int(next)) s")
            }
        }
    }

    private func announceNoTmux() {
        record("{\"kind\":\"no-remote-tmux\"")
        notice("tmux is not installed on \(host): a plain shell instead, which ends if the connection is lost")
    }

    /// A line of the session's own, in its output (so the ring and every client have it), set
    /// apart from the shell's: on a line of its own, in brackets.
    private func notice(_ text: String) {
        let line = Array("\r\n[termhost: \(VisibleText.of(text))]\r\n".utf8)
        line.withUnsafeBytes { deliver($0) }
    }

    /// Output from the channel: into the ring, to every sink, and scanned for events. [session-thread]
    private func deliver(_ data: UnsafeRawBufferPointer) {
        let now = Date().timeIntervalSince1970
        state.withLock { s in
            s.ring.append(data)
            s.lastOutputAt = now
            for sink in s.sinks.values { sink.send(data) }
            for found in s.scanner.scan(data) {
                switch found {
                case .bell: PersistentSession.add(&s, now, "{\"kind\":\"bell\"")
                case .title(let t): PersistentSession.add(&s, now, "{\"kind\":\"title\",\"title\":\(JSONText.quoted(t))")
                }
            }
        }
    }

    /// Records an event and tells every sink. The body is an object without its closing brace
    /// and without "at" (added here, first, so every event reads the same).
    private static func add(_ s: inout State, _ at: Double, _ openBody: String) {
        let json = "{\"at\":\(timestamp(at))," + openBody.dropFirst() + "}"
        s.events.append((at, json))
        if s.events.count > maxEvents { s.events.removeFirst(s.events.count - maxEvents) }
        for sink in s.sinks.values { sink.send(event: json) }
    }

    /// An Ask on this session's host waits, or was decided: an event, and the count `list`
    /// shows (state "waiting" while any waits). An ended session takes no more.
    func note(_ notice: ApprovalNotice) {
        let now = Date().timeIntervalSince1970
        state.withLock { s in
            guard s.ended == nil else { return }
            s.pendingApprovals = s.pendingApprovals.filter { $0.value > now }
            switch notice.kind {
            case .pending(let expiresAt):
                guard !s.decidedApprovals.contains(notice.id),
                      s.pendingApprovals.updateValue(expiresAt, forKey: notice.id) == nil else { return }
            case .decided:
                guard s.pendingApprovals.removeValue(forKey: notice.id) != nil else {
                    s.decidedApprovals = Array((s.decidedApprovals + [notice.id]).suffix(64))
                    return
                }
            }
            PersistentSession.add(&s, Date().timeIntervalSince1970, notice.eventBody)
        }
    }

    /// Records an event given as an object without its closing brace (see `add`).
    private func record(_ openBody: String) {
        state.withLock { PersistentSession.add(&$0, Date().timeIntervalSince1970, openBody) }
    }

    /// The session ended: the last event, then every sink closed with the reason. Only the
    /// first call acts (a kill during a reconnect ends it from the caller's thread, and the
    /// session's thread comes by later); returns whether this one did.
    @discardableResult
    private func end(_ openBody: String, reason: String) -> Bool {
        let sinks: [Sink]? = state.withLock { s in
            guard s.ended == nil else { return nil }
            PersistentSession.add(&s, Date().timeIntervalSince1970, openBody)
            s.ended = (Date().timeIntervalSince1970, reason)
            defer { s.sinks = [:] }
            return Array(s.sinks.values)
        }
        guard let sinks else { return false }
        for sink in sinks { sink.close(reason) }
        return true
    }

    static func timestamp(_ t: Double) -> String { String(format: "%.3f", t) }

    // MARK: what clients call [any-thread]

    var ended: (at: Double, reason: String)? { state.withLock { $0.ended } }

    /// Adds a sink: the replay (soft reset, then the ring) goes to it now, under the lock that
    /// orders output, so live output follows with no gap and no duplicate. False once ended.
    func attach(_ sink: Sink, token: UInt64) -> Bool {
        let (attached, clients): (Bool, Int) = state.withLock { s in
            guard s.ended == nil else { return (false, 0) }
            let replay = PersistentSession.softReset + s.ring.contents
            replay.withUnsafeBytes { sink.send($0) }
            s.sinks[token] = sink
            return (true, s.sinks.count)
        }
        if attached { record("{\"kind\":\"attached\",\"clients\":\(clients)") }
        return attached
    }

    /// Removes a sink and closes it with `reason`. False when it was not attached (any more).
    func detach(token: UInt64, reason: String) -> Bool {
        let (sink, clients): (Sink?, Int) = state.withLock { s in (s.sinks.removeValue(forKey: token), s.sinks.count) }
        guard let sink else { return false }
        sink.close(reason)
        record("{\"kind\":\"detached\",\"clients\":\(clients)")
        return true
    }

    enum WriteRefusal: Error { case ended, busy }

    /// Queues input for the shell, in order with other writes; all of it or nothing.
    func write(_ bytes: UnsafeRawBufferPointer) throws(WriteRefusal) {
        guard ended == nil else { throw .ended }
        guard bytes.count > 0 else { return }
        try inputLock.withLock { _ throws(WriteRefusal) in
            var queued: Int32 = 0
            _ = ioctl(inputRead, UInt(FIONREAD), &queued)
            let room = Int(fcntl(inputWrite, PersistentSession.getPipeSize)) - Int(queued)
            guard bytes.count <= room else { throw .busy }
            var done = 0
            var waited = 0
            while done < bytes.count {
                let n = Glibc.write(inputWrite, bytes.baseAddress! + done, bytes.count - done)
                if n > 0 { done += n; continue }
                if n < 0 && errno == EINTR { continue }
                // The kernel counts pages, not bytes: the rest waits for the session's thread
                // to read (it reads whenever it has room, within 0.1 s), at most 2 s in all.
                guard n < 0 && errno == EAGAIN, waited < 20 else { throw .busy }
                var out = pollfd(fd: inputWrite, events: Int16(POLLOUT), revents: 0)
                _ = poll(&out, 1, 100)
                waited += 1
            }
        }
    }

    /// The PTY's new size; the latest call wins (the session's thread sends it on its next pass).
    func resize(columns: Int, rows: Int) {
        state.withLock { s in
            s.columns = columns
            s.rows = rows
            s.resizePending = true
        }
    }

    /// Ends the session: shuts its connection's socket down, so its thread's next pass fails
    /// and ends it (reason "killed"), or ends a wait between reconnects; `waitEnded` waits.
    func requestKill() {
        let reconnecting = state.withLock { s -> Bool in
            guard s.ended == nil, !s.killed else { return false }
            s.killed = true
            if s.socket >= 0 { _ = Glibc.shutdown(s.socket, Int32(SHUT_RDWR)); return false }
            return true
        }
        wake.signal()
        // Between connections the thread may be inside a connect that takes seconds: the
        // session ends now, for its clients; the thread finds it killed when that returns.
        if reconnecting, end("{\"kind\":\"exit\",\"killed\":true", reason: "killed") { onEnd(255) }
    }

    /// Waits until the session's thread is done with the connection, at most until `deadline`.
    func waitEnded(until deadline: DispatchTime) {
        if finished.wait(timeout: deadline) == .success { finished.signal() }   // others may wait too
    }

    /// The session as list() shows it.
    func json(now: Double) -> String {
        state.withLock { s in
            let waiting = s.pendingApprovals.values.filter { $0 > now }.count
            let stateName: String
            if s.ended != nil { stateName = "ended" }
            else if s.socket < 0 { stateName = "reconnecting" }
            else if waiting > 0 { stateName = "waiting" }
            else if let last = s.lastOutputAt, now - last < PersistentSession.workingSeconds { stateName = "working" }
            else { stateName = "idle" }
            var fields = [
                "\"id\":\(JSONText.quoted(id))", "\"name\":\(JSONText.quoted(host))", "\"host\":\(JSONText.quoted(host))",
                "\"user\":\(JSONText.quoted(user))", "\"state\":\"\(stateName)\"", "\"clients\":\(s.sinks.count)",
                "\"columns\":\(s.columns)", "\"rows\":\(s.rows)", "\"startedAt\":\(PersistentSession.timestamp(started))",
                "\"lastOutputAt\":\(s.lastOutputAt.map(PersistentSession.timestamp) ?? "null")", "\"ringBytes\":\(s.ring.count)",
                "\"remoteTmux\":\(remoteTmux)", "\"pendingApprovals\":\(waiting)",
            ]
            if let ended = s.ended {
                fields.append("\"endedAt\":\(PersistentSession.timestamp(ended.at))")
                fields.append("\"reason\":\(JSONText.quoted(ended.reason))")
            }
            return "{" + fields.joined(separator: ",") + "}"
        }
    }

    /// The events at or after `since`, as a JSON array, oldest first.
    func events(since: Double) -> String {
        "[" + state.withLock { $0.events.filter { $0.at >= since }.map(\.json) }.joined(separator: ",") + "]"
    }
}
