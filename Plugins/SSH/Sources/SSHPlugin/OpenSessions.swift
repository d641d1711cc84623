import Foundation
import Synchronization
import TermhostSDK

/// Sessions that authenticated and have not ended yet. Each ends exactly once: when its
/// command returns, or when the feature shuts down first (SIGINT, SIGTERM, SIGHUP), so the
/// `session.ended` event and the history row are never lost. A session whose saved host
/// another device changed is retired first (`retire(host:reason:)`, HostSyncWatch.swift).
enum OpenSessions {
    struct Session {
        let host: String
        let user: String
        let started: Double
        let vault: Vault
        let pluginHost: PluginHost
        /// The connection's socket, for `retire`: open for as long as the session is listed,
        /// because the session ends (`end`) before its connection is torn down.
        let socket: Int32
        /// The command's stderr, where a retired session says why it ended.
        let stderr: Int32
        /// How `retire` ends a session on a connection others share (SharedExec): its own
        /// channel closes, never the socket under the others. nil: the socket is shut down.
        var retireChannel: (@Sendable () -> Void)? = nil
    }

    private static let open = Mutex<(next: Int, sessions: [Int: Session], retired: Set<Int>)>((0, [:], []))

    static func add(_ s: Session) -> Int {
        open.withLock { state in
            state.next += 1
            state.sessions[state.next] = s
            return state.next
        }
    }

    /// Returns whether `retire` ended the session (it said why on the session's stderr).
    @discardableResult
    static func end(_ token: Int, status: Int32) -> Bool {
        let (ended, retired) = open.withLock { state in
            (state.sessions.removeValue(forKey: token), state.retired.remove(token) != nil)
        }
        if let ended { finish(ended, status: status) }
        return retired
    }

    /// Ends every session to saved host `host`: shuts its socket down, so the session's own
    /// thread sees the connection end and returns (255), and says `reason` on its stderr.
    /// The sockets are shut down under the lock, so none can be closed, and its number reused,
    /// meanwhile; the stderr descriptors are duplicated there for the same reason. The messages
    /// are written after the lock is released: a full pipe or a stopped pager blocks that write,
    /// and `end`/`endAll` (shutdown's bound) must not wait for it. Each waits at most 0.1 s for
    /// room, since shutdown also waits for this call (HostSyncWatch runs it, and is cancelled
    /// first); a line this short goes into a pipe with room in one write, without blocking.
    /// Returns how many sessions it ended. [any-thread]
    @discardableResult
    static func retire(host: String, reason: String) -> Int {
        let stderrs: [Int32] = open.withLock { state in
            let matching = state.sessions.filter { $0.value.host == host && !state.retired.contains($0.key) }
            for (token, s) in matching {
                state.retired.insert(token)
                if let retireChannel = s.retireChannel { retireChannel() } else { _ = Glibc.shutdown(s.socket, Int32(SHUT_RDWR)) }
            }
            return matching.map { fcntl($0.value.stderr, F_DUPFD_CLOEXEC, 0) }
        }
        for fd in stderrs where fd >= 0 {
            defer { close(fd) }
            var room = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&room, 1, 100) == 1, room.revents & Int16(POLLOUT) != 0 else { continue }
            // A terminal may be in raw mode (an interactive `ssh`): CR LF, as ssh's own messages.
            let end = isatty(fd) == 1 ? "\r\n" : "\n"
            writeAll(fd, "termhost: \(VisibleText.of(reason)); the connection was closed" + end)
        }
        return stderrs.count
    }

    static func endAll(status: Int32) {
        let all = open.withLock { state in
            defer { state.sessions = [:]; state.retired = [] }
            return Array(state.sessions.values)
        }
        for s in all { finish(s, status: status) }
    }

    private static func finish(_ s: Session, status: Int32) {
        try? s.pluginHost.events?.publish("org.termhost.ssh.session.ended",
                                          json: "{\"host\":\(JSONText.quoted(s.host)),\"status\":\(status)}")
        try? ConnectionHistory(store: s.vault.store).record(.init(host: s.host, user: s.user, started: s.started,
                                                                  ended: Date().timeIntervalSince1970, status: status))
    }
}
