import Foundation
import SyncCore
import SyncTestSupport
import SyncPostgres
import Testing
import TestSupport

/// The sync loop against a real PostgreSQL server: another device's change arrives through
/// NOTIFY long before the interval, and a server frozen with SIGSTOP in the middle of a sync
/// never holds `stop` past its bound; the change stays pending and reaches the vault once.
@Suite struct PostgresSyncLoopTests {
    func loop(_ team: PostgresTeam, _ user: String, _ d: MemoryDevice, interval: Double, firstDelay: Double,
              observed: ObservedCalls? = nil, gate: NSLock = NSLock()) -> SyncLoop {
        SyncLoop(device: SyncLoop.Device(local: d, state: d, clock: { Date().timeIntervalSince1970 }, vault: { "team" },
                                         openBackend: { ObservedBackend(team.backend(user: user, device: d.name), observed ?? ObservedCalls()) }),
                 interval: interval, firstDelay: firstDelay, gate: gate)
    }

    /// A reconnect's "pull now" hint is given once: a paused loop (or one whose sync fails before
    /// it pulls) waits for its interval again instead of syncing at once, forever.
    @Test func aPausedLoopAgainstARestartedServerWaitsForItsInterval() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = MemoryDevice("laptop")
        let gate = NSLock()
        let loop = loop(team, "alice", a, interval: 2, firstDelay: 0, gate: gate)
        let reports = UnsafeSendableBox<[(at: Date, outcome: SyncOutcome)]>([])
        loop.addObserver { reports.append((at: Date(), outcome: $0.outcome)) }
        loop.start()
        defer { loop.stop(waitingAtMost: 30) }
        #expect(Wait.until { reports.value.contains { $0.outcome == .synced } })
        // Paused as `termhost sync pause` does it, holding the gate so no sync of the loop's overlaps.
        gate.lock()
        try SyncEngine(backend: team.backend(user: "alice", device: a.name), local: a, store: a, clock: { Date().timeIntervalSince1970 }).setPaused(true)
        gate.unlock()
        team.server.stop()
        try team.server.restart()
        // Until a paused sync comes 3 s after the first: the 2 s interval allows two more (one of
        // them woken by the lost connection), not a sync at once, forever.
        #expect(Wait.until {
            let paused = reports.value.filter { $0.outcome == .paused }.map(\.at)
            return paused.count >= 2 && paused.last!.timeIntervalSince(paused[0]) >= 3
        })
        let paused = reports.value.filter { $0.outcome == .paused }.map(\.at)
        #expect(paused.filter { $0.timeIntervalSince(paused[0]) < 3 }.count <= 3, "\(paused.count) paused syncs")
    }

    @Test func anotherDevicesChangeWakesTheLoopThroughNotify() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = MemoryDevice("laptop"), b = MemoryDevice("workstation")
        let calls = ObservedCalls()
        // An interval of an hour: only the notification explains a prompt sync.
        let loop = loop(team, "alice", a, interval: 3600, firstDelay: 0, observed: calls)
        loop.start()
        defer { loop.stop(waitingAtMost: 30) }
        #expect(Wait.until { calls.started >= 1 })
        let engineB = try SyncEngine(backend: team.backend(user: "bob", device: b.name), local: b, store: b, clock: { Date().timeIntervalSince1970 })
        b.putHost("web", #"{"address":"web.example.com"}"#)
        #expect(engineB.sync() == .synced)
        #expect(Wait.until(timeout: 120) { a.host("web") != nil })
    }

    @Test func aFrozenServerNeverHoldsStopPastItsBoundAndTheChangeIsSentOnce() throws {
        let team = try PostgresTeam()
        defer { team.remove() }
        let a = MemoryDevice("laptop")
        let calls = ObservedCalls()
        let loop = loop(team, "alice", a, interval: 3600, firstDelay: 0, observed: calls)
        let reports = UnsafeSendableBox<[SyncOutcome]>([])
        loop.addObserver { reports.append($0.outcome) }
        loop.start()
        #expect(Wait.until { reports.value == [.synced] })
        let before = calls.started
        a.putHost("web", #"{"address":"web.example.com"}"#)
        let frozen = [team.server.pid] + Self.children(of: team.server.pid)
        for pid in frozen { kill(pid, SIGSTOP) }
        var thawed = false
        defer { if !thawed { for pid in frozen { kill(pid, SIGCONT) } } }
        loop.syncSoon()
        #expect(Wait.until { calls.started > before }, "the second sync never reached the server")
        let started = Date()
        #expect(!loop.stop(waitingAtMost: 1.5))
        #expect(Date().timeIntervalSince(started) < 2)
        #expect(try a.list("outbox").count == 1)
        for pid in frozen { kill(pid, SIGCONT) }
        thawed = true
        // The abandoned sync goes on once the server does; then one more sync from this device.
        #expect(loop.stop(waitingAtMost: 60))
        let engine = try SyncEngine(backend: team.backend(user: "alice", device: a.name), local: a, store: a, clock: { Date().timeIntervalSince1970 })
        #expect(engine.sync() == .synced)
        #expect(try a.list("outbox").isEmpty)
        #expect(try team.server.psql("SELECT count(*) FROM termhost_sync.changes", database: PostgresTeam.database) == "1\n")
    }

    /// The server's processes: the postmaster's children serve the connections.
    static func children(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == parent
        }
    }
}

/// How many statements a backend began: a sync in flight is one that began one and never reported.
final class ObservedCalls: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func begin() { lock.lock(); count += 1; lock.unlock() }
    var started: Int { lock.lock(); defer { lock.unlock() }; return count }
}

/// The real PostgreSQL backend, counting the statements it begins (those a sync sends first).
final class ObservedBackend: ForwardingBackend {
    let calls: ObservedCalls

    init(_ inner: PostgresBackend, _ calls: ObservedCalls) {
        self.calls = calls
        super.init(inner)
    }

    override func pull(after cursor: SyncCursor, limit: Int) throws(SyncBackendError) -> SyncPage {
        calls.begin()
        return try inner.pull(after: cursor, limit: limit)
    }

    override func lastChangeID(device: String) throws(SyncBackendError) -> String? {
        calls.begin()
        return try inner.lastChangeID(device: device)
    }
}
