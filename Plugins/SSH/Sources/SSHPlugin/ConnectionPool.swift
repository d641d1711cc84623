import CLibSSH2
import Foundation
import Glibc
import Synchronization
import TermhostSDK

/// Authenticated connections the daemon keeps after a command is done with them, so the next
/// one to the same destination opens a channel instead of a TCP connection, a key exchange and
/// an authentication (OpenSSH's ControlMaster with ControlPersist). A connection has one user at
/// a time: it is handed from one command to the next, never used by two at once.
///
/// What makes two requests "the same destination" is everything that decided how the
/// connection was made: the resolved destination (address, port, remote user, identity, saved
/// password or key, keepalive), its jump hosts, and the agent that authenticated it. Trust and
/// authentication are never reused across hosts, users, identities or agents.
///
/// The setting `connectionIdleTimeout` of org.termhost.ssh (0 to 86400 s, default 600) closes a
/// connection idle that long; 0 never keeps one. Only the daemon keeps connections: a CLI
/// process ends with its command.
final class ConnectionPool: Sendable {
    static let shared = ConnectionPool()
    static let idleSeconds = 0...86400
    static let defaultIdleSeconds = 600

    struct Key: Hashable, Sendable {
        let route: String
    }

    private struct Idle: Sendable {
        let kept: HandOver<SSHConnection>
        let until: Date
        var connection: SSHConnection { kept.value }
    }
    private let idle = Mutex<[Key: [Idle]]>([:])
    /// Wakes the reaper early (a connection was kept, or all are to go).
    private let wake = DispatchSemaphore(value: 0)
    private let reaping = Mutex(false)

    /// The key of a connection to `destination` through `hops`, authenticated with `agent`.
    static func key(_ destination: Destination, hops: [Destination], agent: String?) -> Key {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let parts = ([destination] + hops).map { String(decoding: (try? encoder.encode($0)) ?? Data(), as: UTF8.self) }
        return Key(route: parts.joined(separator: "\n") + "\nagent=" + (agent ?? ""))
    }

    /// The idle timeout in seconds when connections may be kept here (the daemon), else nil.
    static func keepSeconds(_ host: PluginHost) throws(SSHError) -> Int? {
        guard host.isDaemon else { return nil }
        let seconds = try ConnectionSettings.number(host, "connectionIdleTimeout", in: idleSeconds, unit: "seconds") ?? defaultIdleSeconds
        return seconds > 0 ? seconds : nil
    }

    /// A kept connection for `key`, the newest first, or nil. Each candidate must open a
    /// session channel first: one the server closed (or that hung up, or said goodbye) is
    /// freed and the next tried. `reserve`: the channel is kept for the caller's first
    /// `openSessionChannel()` (an exec costs no extra round trip); otherwise it is closed.
    func take(_ key: Key, reserve: Bool, log: PluginHost? = nil) -> SSHConnection? {
        while let candidate = idle.withLock({ pool -> SSHConnection? in
            guard var list = pool[key], let last = list.popLast() else { return nil }
            pool[key] = list.isEmpty ? nil : list
            return last.connection
        }) {
            let quiet = ConnectionPool.quiet(candidate)
            if quiet, let probe = candidate.probeChannel() {
                // Silence while it sat here is no server going quiet: keepalive counts from now.
                candidate.sessionContext.lastReceive = ConnectionSettings.monotonicMilliseconds()
                if reserve { candidate.reservedChannel = probe } else { libssh2_channel_free(probe) }
                return candidate
            }
            log?.log(.info, "ssh: a kept connection to \(candidate.hostLabel) is no longer usable (\(quiet ? candidate.lastError() : "the server hung up")); connecting anew")
            candidate.teardown()
        }
        return nil
    }

    /// Keeps `connection` for `seconds`; the reaper frees it then, unless taken before. Its
    /// caller has closed every channel it opened.
    func keep(_ connection: SSHConnection, _ key: Key, seconds: Int) {
        if let reserved = connection.reservedChannel {
            connection.reservedChannel = nil
            libssh2_channel_free(reserved)
        }
        libssh2_session_set_blocking(connection.session, 1)
        libssh2_session_set_timeout(connection.session, connection.timeoutSeconds * 1000)
        let until = Date().addingTimeInterval(Double(seconds))
        idle.withLock { $0[key, default: []].append(Idle(kept: HandOver(value: connection), until: until)) }
        startReaper()
        wake.signal()
    }

    /// How many connections are kept now.
    var count: Int { idle.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    /// Frees every kept connection (the feature's shutdown): the server sees a disconnect.
    func closeAll() {
        let all = idle.withLock { pool -> [SSHConnection] in
            let all = pool.values.flatMap { $0.map(\.connection) }
            pool = [:]
            return all
        }
        all.forEach { $0.teardown() }
    }

    /// Whether an idle connection's socket neither hung up nor failed, and the server did not
    /// say goodbye (data waiting is read by the probe, which then fails on a disconnect).
    private static func quiet(_ c: SSHConnection) -> Bool {
        guard c.sessionContext.disconnect == nil else { return false }
        var p = pollfd(fd: c.socket, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, 0)
        return p.revents & Int16(POLLERR | POLLHUP | POLLNVAL) == 0
    }

    private func startReaper() {
        guard reaping.withLock({ started in
            defer { started = true }
            return !started
        }) else { return }
        Thread.detachNewThread { [self] in
            while true {
                let now = Date()
                let (expired, next) = idle.withLock { pool -> ([SSHConnection], Date?) in
                    var expired: [SSHConnection] = []
                    for (key, list) in pool {
                        let (gone, kept) = (list.filter { $0.until <= now }, list.filter { $0.until > now })
                        expired += gone.map(\.connection)
                        pool[key] = kept.isEmpty ? nil : kept
                    }
                    return (expired, pool.values.flatMap { $0.map(\.until) }.min())
                }
                expired.forEach { $0.teardown() }
                let wait = next.map { max(0.05, $0.timeIntervalSinceNow) } ?? 3600
                _ = wake.wait(timeout: .now() + wait)
            }
        }
    }
}
