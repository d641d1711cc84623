import CTermhost
import Foundation
import Synchronization
import TermhostSDK

/// One SSH feature instance's persistent terminal sessions ("org.termhost.ssh.sessions/1",
/// SDK/include/termhost/ssh/sessions.h): the registry the service's entry points
/// (SessionsService.swift) reach through the table's context. Sessions live as long as the
/// instance: its shutdown kills them.
final class SessionsProvider: Sendable {
    let host: PluginHost
    /// The table get_service hands out for this instance: written once here, read-only after,
    /// freed at deinit (feature.h: valid "until destroy()").
    nonisolated(unsafe) let table: UnsafeMutablePointer<termhost_ssh_sessions_t>

    /// Ended sessions stay listed this long, so a client can still read how they ended.
    static let endedKeptSeconds = 300.0
    static let defaultRingBytes = 1 << 20
    static let ringBytesRange = (64 * 1024)...(64 << 20)

    private struct State {
        var sessions: [PersistentSession] = []
        var attachments: [UInt64: String] = [:]   // token → session ID
        var nextToken: UInt64 = 1
        /// Whether the sessions a previous daemon left were looked for (restoreOnce).
        var restored = false
        /// Set by killAll: sessions ending now keep their records.
        var stopping = false
        /// The assistant's Asks waiting now, by id (ApprovalWatch), for sessions opened later.
        var waitingAsks: [Int: ApprovalNotice] = [:]
    }
    private let state = Mutex(State())

    init(host: PluginHost) {
        self.host = host
        table = .allocate(capacity: 1)
        table.initialize(to: SessionsService.template)
        table.pointee.context = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        table.deinitialize(count: 1)
        table.deallocate()
    }

    /// The instance behind a table this plugin handed out.
    static func of(_ table: UnsafePointer<termhost_ssh_sessions_t>?) -> SessionsProvider? {
        guard let context = table?.pointee.context else { return nil }
        return Unmanaged<SessionsProvider>.fromOpaque(context).takeUnretainedValue()
    }

    // MARK: the service's operations

    /// An Ask of the assistant waits, or was decided: recorded in every live session to its
    /// host (ApprovalWatch), and kept while it waits for the sessions opened meanwhile.
    func note(_ notice: ApprovalNotice) {
        guard let host = notice.host else { return }
        let now = Date().timeIntervalSince1970
        let sessions = state.withLock { s -> [PersistentSession] in
            s.waitingAsks = s.waitingAsks.filter { ($0.value.expiresAt ?? 0) > now }
            if notice.expiresAt != nil { s.waitingAsks[notice.id] = notice } else { s.waitingAsks[notice.id] = nil }
            return s.sessions
        }
        for session in sessions where session.host == host { session.note(notice) }
    }

    /// The Asks waiting now on `host`, for a session that opens to it.
    private func waitingAsks(on host: String) -> [ApprovalNotice] {
        let now = Date().timeIntervalSince1970
        return state.withLock { $0.waitingAsks.values.filter { $0.host == host && ($0.expiresAt ?? 0) > now }.sorted { $0.id < $1.id } }
    }

    /// Opens a session for `request` (checked by SessionRequest) and returns its JSON.
    func open(_ request: SessionRequest) throws(PluginError) -> String {
        restoreOnce()
        _ = try ringBytes()   // a wrong setting is refused before anything connects
        let (connection, destination): (SSHConnection, Destination)
        do { (connection, destination) = try SessionsProvider.connect(request, host: host) } catch {
            throw PluginError(UnattendedConnect.message(error, host: request.host, who: "A persistent session"),
                              code: Int32(error.kind == .refused || error.cause != nil ? TERMHOST_ERR_DENIED : TERMHOST_ERR_IO))
        }
        // Without remoteTmux in the request, the saved host's own default (`--remote-tmux yes`).
        var request = request
        if request.remoteTmux == nil, let saved = host.store.flatMap({ try? Vault(store: $0).host(destination.name) }) {
            request.remoteTmux = saved.remoteTmux == true
        }
        let record = SessionRecord(id: newID(), host: destination.name, user: connection.user,
                                   started: Date().timeIntervalSince1970, request: request)
        let session: PersistentSession
        do { session = try start(record, connection: connection) } catch {
            connection.teardown()
            throw PluginError(error.message, code: Int32(TERMHOST_ERR_IO))
        }
        // Only a remote tmux session can be found again by a later daemon: it is remembered
        // until it ends (SessionRecord.swift).
        if request.remoteTmux == true { try? record.save(in: host.store) }
        host.log(.info, "persistent session \(session.id) opened to \(destination.name)")
        return session.json(now: Date().timeIntervalSince1970)
    }

    /// Resolves, connects and authenticates `request`'s host, never prompting: scene 0, on
    /// which the host refuses every prompt (fail closed). Also what a reconnect runs.
    static func connect(_ request: SessionRequest, host: PluginHost) throws(SSHError) -> (SSHConnection, Destination) {
        guard let store = host.store else { throw SSHError("ssh: the host store is unavailable") }
        let vault = Vault(store: store)
        let resolved: Destination?
        do { resolved = try vault.resolve(request.host) } catch { throw SSHError("ssh: \(error.message)") }
        guard var destination = resolved else {
            throw SSHError("ssh: '\(VisibleText.of(request.host))' is neither a saved host nor user@host[:port]")
        }
        if let forwardAgent = request.forwardAgent { destination.forwardAgent = forwardAgent }
        let hops = try JumpRoute.hops(to: destination, extra: request.jump, vault: vault)
        return (try JumpRoute.connect(to: destination, through: hops, interaction: ConnectionPrompts(host: host, scene: 0)), destination)
    }

    /// Starts the session `record` describes, on `connection`, or connecting on its own thread
    /// when nil (a restored session), and lists it.
    private func start(_ record: SessionRecord, connection: SSHConnection?) throws(SSHError) -> PersistentSession {
        let host = self.host
        let request = record.request
        // History and the session events, as for `termhost ssh`. The socket is not given:
        // a reconnect replaces it, and OpenSessions.retire must never shut down a stale number.
        let history: Int? = host.store.map { store in
            OpenSessions.add(.init(host: record.host, user: record.user, started: record.started,
                                   vault: Vault(store: store), pluginHost: host, socket: -1, stderr: -1))
        }
        try? host.events?.publish("org.termhost.ssh.session.started",
                                  json: "{\"host\":\(JSONText.quoted(record.host)),\"user\":\(JSONText.quoted(record.user))}")
        do {
            let session = try PersistentSession(
                id: record.id, host: record.host, user: record.user, started: record.started, connection: connection,
                connect: { () throws(SSHError) in try SessionsProvider.connect(request, host: host).0 },
                columns: request.columns, rows: request.rows, term: request.term, remoteTmux: request.remoteTmux == true,
                ringBytes: (try? ringBytes()) ?? SessionsProvider.defaultRingBytes,
                log: { host.log(.warning, $0) },
                onEnd: { [weak self] status in
                    if let history { OpenSessions.end(history, status: status) }
                    // Ended for good, unless the daemon is only stopping: a remote tmux session
                    // then lives on, for the next daemon to find.
                    if let self, !self.state.withLock({ $0.stopping }) { SessionRecord.remove(record.id, from: host.store) }
                })
            state.withLock { $0.sessions.append(session) }
            // Asks already waiting on its host show from its start.
            for notice in waitingAsks(on: record.host) { session.note(notice) }
            return session
        } catch {
            if let history { OpenSessions.end(history, status: 255) }
            throw error
        }
    }

    /// The remote tmux sessions a previous daemon left (it was stopped, or killed): listed
    /// again and reconnected, once per process, on the service's first use.
    private func restoreOnce() {
        let records: [SessionRecord] = state.withLock { s in
            guard !s.restored else { return [] }
            s.restored = true
            return SessionRecord.all(in: host.store)
        }
        for record in records {
            guard (try? start(record, connection: nil)) != nil else { continue }
            host.log(.info, "persistent session \(record.id) to \(record.host) restored: reconnecting to its remote tmux session")
        }
    }

    /// The setting sessionRingBytes, range-checked: a wrong value is an error that names it.
    private func ringBytes() throws(PluginError) -> Int {
        guard let text = try host.setting(feature: "org.termhost.ssh", key: "sessionRingBytes") else { return SessionsProvider.defaultRingBytes }
        let range = SessionsProvider.ringBytesRange
        guard let n = Int(text), range.contains(n) else {
            throw PluginError("the setting sessionRingBytes of org.termhost.ssh is '\(VisibleText.of(text))': it must be a number of bytes from \(range.lowerBound) to \(range.upperBound)",
                              code: Int32(TERMHOST_ERR_INVALID_ARGUMENT))
        }
        return n
    }

    private func newID() -> String {
        state.withLock { s in
            while true {
                let id = String(UInt32.random(in: 0x100000...0xFFFFFF), radix: 16)
                if !s.sessions.contains(where: { $0.id == id }) { return id }
            }
        }
    }

    /// The sessions as a JSON array, oldest first; sessions ended long ago are dropped here.
    func list() -> String {
        restoreOnce()
        let now = Date().timeIntervalSince1970
        let sessions = state.withLock { s in
            s.sessions.removeAll { ($0.ended?.at).map { now - $0 > SessionsProvider.endedKeptSeconds } ?? false }
            return s.sessions
        }
        return "[" + sessions.map { $0.json(now: now) }.joined(separator: ",") + "]"
    }

    func session(_ id: String) throws(PluginError) -> PersistentSession {
        restoreOnce()
        guard let found = state.withLock({ s in s.sessions.first { $0.id == id } }) else {
            throw PluginError("no persistent session '\(VisibleText.of(id))' ('termhost sessions' lists them)", code: Int32(TERMHOST_ERR_NOT_FOUND))
        }
        return found
    }

    func attach(_ id: String, _ sink: PersistentSession.Sink) throws(PluginError) -> UInt64 {
        let session = try session(id)
        let token = state.withLock { s in
            defer { s.nextToken += 1 }
            s.attachments[s.nextToken] = id
            return s.nextToken
        }
        guard session.attach(sink, token: token) else {
            state.withLock { _ = $0.attachments.removeValue(forKey: token) }
            throw PluginError("the persistent session '\(VisibleText.of(id))' has ended: \(session.ended?.reason ?? "")", code: Int32(TERMHOST_ERR_NOT_FOUND))
        }
        return token
    }

    func detach(_ token: UInt64) throws(PluginError) {
        let id = state.withLock { $0.attachments.removeValue(forKey: token) }
        guard let id else {
            throw PluginError("no attachment \(token): it was detached already", code: Int32(TERMHOST_ERR_NOT_FOUND))
        }
        // False when the session ended first: its end closed the sink already.
        _ = (try? session(id))?.detach(token: token, reason: "detached")
    }

    func kill(_ id: String) throws(PluginError) {
        let session = try session(id)
        // A remote tmux session outlives its connection, so it is ended on the remote first,
        // over a connection of its own (the session's belongs to its thread).
        if session.remoteTmux, let record = SessionRecord.all(in: host.store).first(where: { $0.id == id }) {
            do {
                let (connection, _) = try SessionsProvider.connect(record.request, host: host)
                defer { connection.teardown() }
                _ = try ExecChannel(connection: connection).run("tmux kill-session -t \(SessionShell.tmuxSession(id)) 2>/dev/null", input: []) { _, _ in }
            } catch {
                host.log(.warning, "persistent session \(id): could not end remote tmux session \(SessionShell.tmuxSession(id)): \(error.message)")
            }
        }
        session.requestKill()
        if session.ended == nil { session.waitEnded(until: .now() + 5) }
        // The tokens stay until detached: a detach after the end is answered (its sink was
        // closed by the end), never left waiting.
    }

    /// Every session ends with the feature (the daemon stopping): all asked at once, then
    /// waited for within `bound` seconds in all (the feature's shutdown is bounded).
    func killAll(bound: Double) {
        let all = state.withLock { s in
            s.stopping = true
            return s.sessions
        }
        for session in all { session.requestKill() }
        let deadline = DispatchTime.now() + bound
        for session in all { session.waitEnded(until: deadline) }
    }
}

/// An open() request's JSON (ssh/sessions.h), checked where it enters: it comes from another
/// plugin or, through the daemon, from any process of the user's.
struct SessionRequest: Equatable {
    var host: String
    var columns = 80
    var rows = 24
    var term = "xterm-256color"
    var forwardAgent: Bool? = nil
    var jump: [String] = []
    /// Run the shell in remote tmux (`--remote-tmux`), so it survives lost connections; nil
    /// takes the saved host's default.
    var remoteTmux: Bool? = nil

    static let sizeRange = 1...10_000

    /// JSON true and false arrive as NSNumber too; Foundation marks them with type "c".
    static func isBool(_ n: NSNumber) -> Bool { String(cString: n.objCType) == "c" }

    init(host: String) { self.host = host }

    init(json: String) throws(PluginError) {
        func bad(_ why: String) -> PluginError { PluginError("open: \(why)", code: Int32(TERMHOST_ERR_INVALID_ARGUMENT)) }
        guard json.utf8.count <= 64 * 1024, let value = try? JSONSerialization.jsonObject(with: Data(json.utf8)),
              let o = value as? [String: Any] else { throw bad("the request is not a JSON object of at most 64 KiB") }
        guard let host = o["host"] as? String, !host.isEmpty, host.utf8.count <= 1024 else {
            throw bad("the request names no host (\"host\": a saved host or user@host[:port])")
        }
        self.host = host
        for (key, range) in [("columns", SessionRequest.sizeRange), ("rows", SessionRequest.sizeRange)] {
            guard let raw = o[key] else { continue }
            guard let n = raw as? NSNumber, !SessionRequest.isBool(n), let v = Int(exactly: n.doubleValue), range.contains(v) else {
                throw bad("\(key) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            if key == "columns" { columns = v } else { rows = v }
        }
        if let raw = o["term"] {
            guard let t = raw as? String, (1...64).contains(t.utf8.count), t.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw bad("term must be 1 to 64 printable ASCII characters")
            }
            term = t
        }
        if let raw = o["forwardAgent"] {
            guard let n = raw as? NSNumber, SessionRequest.isBool(n) else { throw bad("forwardAgent must be true or false") }
            forwardAgent = n.boolValue
        }
        if let raw = o["remoteTmux"] {
            guard let n = raw as? NSNumber, SessionRequest.isBool(n) else { throw bad("remoteTmux must be true or false") }
            remoteTmux = n.boolValue
        }
        if let raw = o["jump"] {
            guard let hops = raw as? [String], hops.count <= 8, hops.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 1024 }) else {
                throw bad("jump must be a list of at most 8 hosts")
            }
            jump = hops
        }
    }
}
