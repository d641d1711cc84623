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

    let id: String
    let host: String
    let user: String
    let started: Double
    /// The connection's socket, for kill(): shutting it down ends the session's thread. The
    /// connection itself (libssh2) belongs to that thread alone.
    private let socket: Int32
    /// Input travels to the session's thread through this pipe (its read end is the pump's
    /// stdin), so a write from any thread never touches libssh2.
    private let inputRead: Int32
    private let inputWrite: Int32
    private let inputLock = Mutex(())

    private struct State {
        var ring: SessionRing
        var scanner = TerminalEventScanner()
        var sinks: [UInt64: Sink] = [:]
        var events: [(at: Double, json: String)] = []
        var lastOutputAt: Double? = nil
        var columns: Int
        var rows: Int
        var resizePending = false
        var ended: (at: Double, reason: String)? = nil
        var killed = false
    }
    private let state: Mutex<State>
    private let finished = DispatchSemaphore(value: 0)

    /// Called once on the session's thread after it ended, with the shell's status (255 when
    /// the connection was lost or the session killed).
    private let onEnd: @Sendable (Int32) -> Void

    /// Connects nothing: `connection` is authenticated already. Requests the PTY and the shell
    /// on the caller's thread (blocking), then starts the session's thread, which owns the
    /// connection from then on. When this throws, the caller still owns the connection.
    init(id: String, host: String, connection: SSHConnection, columns: Int, rows: Int, term: String,
         ringBytes: Int, log: @escaping @Sendable (String) -> Void, onEnd: @escaping @Sendable (Int32) -> Void) throws(SSHError) {
        self.onEnd = onEnd
        self.id = id
        self.host = host
        socket = connection.socket
        user = connection.user
        started = Date().timeIntervalSince1970
        let channel = try connection.openSessionChannel()
        guard libssh2_channel_request_pty_ex(channel, term, UInt32(term.utf8.count), nil, 0,
                                             Int32(columns), Int32(rows), 0, 0) == 0 else {
            libssh2_channel_free(channel)
            throw SSHError("ssh: the server refused a terminal: \(connection.lastError())")
        }
        let agent = AgentForwarding.start(on: channel, connection: connection, warn: log)
        guard libssh2_channel_process_startup(channel, "shell", 5, nil, 0) == 0 else {
            libssh2_channel_free(channel)
            throw SSHError("ssh: the server refused a shell: \(connection.lastError())")
        }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            libssh2_channel_free(channel)
            throw SSHError("ssh: pipe: \(String(cString: strerror(errno)))")
        }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        // Room for the whole input bound (the kernel may give less; write() then waits briefly).
        _ = fcntl(fds[1], PersistentSession.setPipeSize, Int32(PersistentSession.maxPendingInput))
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        inputRead = fds[0]
        inputWrite = fds[1]
        state = Mutex(State(ring: SessionRing(capacity: ringBytes), columns: columns, rows: rows))
        record(["kind": "\"opened\""])
        // Handed to the session's thread, which alone uses them from here on.
        nonisolated(unsafe) let owned = (connection, channel, agent)
        let thread = Thread { [self] in run(owned.0, owned.1, owned.2) }
        thread.name = "termhost-ssh-session-\(id)"
        thread.start()
    }

    deinit {
        close(inputRead)
        close(inputWrite)
    }

    // MARK: the session's thread

    private func run(_ connection: SSHConnection, _ channel: OpaquePointer, _ agent: AgentForwarding?) {
        var pump = ChannelPump(connection: connection, channel: channel)
        pump.agent = agent
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
        let outcome: (String, String)
        var status: Int32 = 255
        do {
            status = try pump.run(input: .descriptor(inputRead)) { [self] _, data in deliver(data) }
            outcome = ("{\"kind\":\"exit\",\"status\":\(status)}", "the shell exited with status \(status)")
        } catch {
            let killed = state.withLock { $0.killed }
            outcome = killed ? ("{\"kind\":\"exit\",\"killed\":true}", "killed")
                : ("{\"kind\":\"lost\",\"reason\":\(JSONText.quoted(error.message))}", error.message)
        }
        libssh2_channel_free(channel)
        connection.teardown()
        end(eventBody: outcome.0, reason: outcome.1)
        onEnd(status)
        finished.signal()
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

    private func record(_ fields: KeyValuePairs<String, String>) {
        let body = "{" + fields.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
        state.withLock { PersistentSession.add(&$0, Date().timeIntervalSince1970, body) }
    }

    /// The session ended: the last event, then every sink closed with the reason.
    private func end(eventBody: String, reason: String) {
        let sinks: [Sink] = state.withLock { s in
            PersistentSession.add(&s, Date().timeIntervalSince1970, String(eventBody.dropLast()))
            s.ended = (Date().timeIntervalSince1970, reason)
            defer { s.sinks = [:] }
            return Array(s.sinks.values)
        }
        for sink in sinks { sink.close(reason) }
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
        if attached { record(["kind": "\"attached\"", "clients": "\(clients)"]) }
        return attached
    }

    /// Removes a sink and closes it with `reason`. False when it was not attached (any more).
    func detach(token: UInt64, reason: String) -> Bool {
        let (sink, clients): (Sink?, Int) = state.withLock { s in (s.sinks.removeValue(forKey: token), s.sinks.count) }
        guard let sink else { return false }
        sink.close(reason)
        record(["kind": "\"detached\"", "clients": "\(clients)"])
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
    /// and ends it (reason "killed"); `waitEnded` waits for that.
    func requestKill() {
        let running = state.withLock { s -> Bool in
            guard s.ended == nil, !s.killed else { return false }
            s.killed = true
            return true
        }
        if running { _ = Glibc.shutdown(socket, Int32(SHUT_RDWR)) }
    }

    /// Waits until the session's thread is done with the connection, at most until `deadline`.
    func waitEnded(until deadline: DispatchTime) {
        if finished.wait(timeout: deadline) == .success { finished.signal() }   // others may wait too
    }

    /// The session as list() shows it.
    func json(now: Double) -> String {
        state.withLock { s in
            let stateName: String
            if s.ended != nil { stateName = "ended" }
            else if let last = s.lastOutputAt, now - last < PersistentSession.workingSeconds { stateName = "working" }
            else { stateName = "idle" }
            var fields = [
                "\"id\":\(JSONText.quoted(id))", "\"name\":\(JSONText.quoted(host))", "\"host\":\(JSONText.quoted(host))",
                "\"user\":\(JSONText.quoted(user))", "\"state\":\"\(stateName)\"", "\"clients\":\(s.sinks.count)",
                "\"columns\":\(s.columns)", "\"rows\":\(s.rows)", "\"startedAt\":\(PersistentSession.timestamp(started))",
                "\"lastOutputAt\":\(s.lastOutputAt.map(PersistentSession.timestamp) ?? "null")", "\"ringBytes\":\(s.ring.count)",
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
