import Dispatch
import Synchronization

/// One authenticated connection behind the transport service's handles: the session, the
/// executor every libssh2 call for it runs on, and the bridges of every handle on it.
///
/// A link has one handle, or (in the daemon, opened with TERMHOST_SSH_OPEN_SHARED) several:
/// callers that open the same destination the same way join the live link instead of making
/// a connection of their own, as OpenSSH's ControlMaster multiplexes sessions over one
/// connection. Each handle owns what it opened (ChannelBridges tags it with the handle's
/// owner id); the last handle's close keeps the connection for later (ConnectionPool) or
/// frees it.
///
/// `@unchecked`: `connection` (an SSHConnection, not Sendable) is touched only on `executor`,
/// which debug builds check (ExecutorCheck); everything else here is immutable.
final class TransportLink: @unchecked Sendable {
    let connection: SSHConnection
    let executor = DispatchQueue(label: "org.termhost.ssh.session")
    let bridges: ChannelBridges
    /// Where the last close keeps the connection (the daemon's ConnectionPool), or nil to free
    /// it. Sharing needs it too: its key is what "the same destination" means.
    let kept: (key: ConnectionPool.Key, seconds: Int)?
    /// Opened with TERMHOST_SSH_OPEN_SHARED: other shared opens may join it.
    let shared: Bool
    /// Found lost by a caller that meant to join it: nobody else joins it.
    let gone = Atomic<Bool>(false)

    init(_ connection: SSHConnection, kept: (key: ConnectionPool.Key, seconds: Int)?, shared: Bool) {
        self.connection = connection
        self.kept = kept
        self.shared = shared && kept != nil
        bridges = ChannelBridges(connection: connection, executor: executor)
        ExecutorCheck.mark(executor)
    }
}

/// The daemon's links open with several possible users (TERMHOST_SSH_OPEN_SHARED), by
/// destination key, with how many handles each has. A link leaves when its last handle closes,
/// before that close runs, so nobody joins a connection on its way out.
final class LiveLinks: Sendable {
    static let shared = LiveLinks()

    private struct Entry: Sendable {
        let link: TransportLink
        var users: Int
    }
    private let live = Mutex<[ConnectionPool.Key: [Entry]]>([:])

    /// Adds a link its first handle just opened.
    func add(_ link: TransportLink) {
        guard link.shared, let key = link.kept?.key else { return }
        live.withLock { $0[key, default: []].append(Entry(link: link, users: 1)) }
    }

    /// A live link to `key` with one more user, or nil. The caller checks on the executor
    /// that it is still alive, and gives it back with `release` when it is not.
    func join(_ key: ConnectionPool.Key) -> TransportLink? {
        live.withLock { all -> TransportLink? in
            guard var list = all[key], let i = list.lastIndex(where: { !$0.link.gone.load(ordering: .relaxed) }) else { return nil }
            list[i].users += 1
            all[key] = list
            return list[i].link
        }
    }

    /// One user fewer; true when that was the last (the link has left: the caller closes it).
    /// A link that was never added (not shared) has one user, its only handle.
    func release(_ link: TransportLink) -> Bool {
        guard link.shared, let key = link.kept?.key else { return true }
        return live.withLock { all -> Bool in
            guard var list = all[key], let i = list.firstIndex(where: { $0.link === link }) else { return true }
            list[i].users -= 1
            let last = list[i].users == 0
            if last { list.remove(at: i) }
            all[key] = list.isEmpty ? nil : list
            return last
        }
    }

    /// How many handles share `link` now (1 for a link that is not shared).
    func users(of link: TransportLink) -> Int {
        guard link.shared, let key = link.kept?.key else { return 1 }
        return live.withLock { $0[key]?.first(where: { $0.link === link })?.users ?? 0 }
    }
}
