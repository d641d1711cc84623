import Foundation
import SyncCore
import SyncTestSupport
import SyncPostgres
import TestSupport

/// The Sync figures the issue asks for, on the engine with in-memory devices (so the store is
/// not measured), against each backend:
///   - first sync of 10,000 records: the device that has them uploads, a second device downloads;
///   - latency from a change on device A to it being applied on device B, which waits as the
///     plugin does (PostgreSQL: LISTEN/NOTIFY; folder: syncing in a loop, it has no signal);
///   - round trips to PostgreSQL per sync (statements sent, connection setup included);
///   - records device A pulls in the sync after its upload (its own are not read back).
/// PostgreSQL is a private server this program starts (Tests/TestSupport's PostgresServer).
let records = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 10_000
let samples = 20
let hosts = MemoryDevice.hosts

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func engine(_ backend: SyncBackend, _ local: MemoryDevice) throws -> SyncEngine {
    try SyncEngine(backend: backend, local: local, store: local, clock: { 0 })
}

func check(_ outcome: SyncOutcome, _ what: String) {
    if case .synced = outcome { return }
    FileHandle.standardError.write(Data("sync-bench: \(what): \(outcome)\n".utf8))
    exit(1)
}

func id(_ i: Int) -> SyncRecordID { SyncRecordID(namespace: hosts.namespace, collection: hosts.collection, key: "host-\(i)") }

final class Shared<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}

/// Runs the three measurements for one backend kind; `make` gives each device its backend.
func measure(_ name: String, make: () -> SyncBackend, waits: Bool) throws {
    let a = MemoryDevice(), b = MemoryDevice()
    for i in 0..<records { a.write(id(i), hostRecord(i)) }
    let backendA = make(), backendB = make()
    let engineA = try engine(backendA, a), engineB = try engine(backendB, b)
    let upload = seconds { check(engineA.sync(), "\(name): first sync of device A") }
    let download = seconds { check(engineB.sync(), "\(name): first sync of device B") }
    guard b.count == records else { print("\(name): device B has \(b.count) of \(records) records"); exit(1) }
    print(String(format: "%@: first sync of %d records: upload %.2f s, download %.2f s", name, records, upload, download))
    check(engineA.sync(), "\(name): the sync after the upload")
    print("\(name): records pulled after an upload: \(engineA.recordsPulled) of \(records)")

    if let pg = backendA as? PostgresBackend {
        let before = pg.roundTrips
        check(engineA.sync(), "idle sync")
        let idle = pg.roundTrips - before
        a.write(id(0), hostRecord(0, revision: 1))
        let beforeOne = pg.roundTrips
        check(engineA.sync(), "one change")
        print("\(name): round trips per sync: \(idle) with nothing to do, \(pg.roundTrips - beforeOne) with one change")
    }

    // B waits for changes on its own thread and applies them; A changes one record at a time.
    let applied = Shared<[String: DispatchTime]>([:])
    b.onApply = { rid, payload in
        guard let payload, let text = String(bytes: payload, encoding: .utf8), let r = text.range(of: "rev-") else { return }
        applied.value["\(rid.key) \(text[r.upperBound...].prefix(while: \.isNumber))"] = .now()
    }
    let stop = Shared(false)
    let worker = Shared((engineB, backendB))
    let thread = Thread {
        let (e, backend) = worker.value
        while !stop.value {
            if !waits || backend.waitForChanges(after: .start, seconds: 1) { _ = e.sync() }
        }
    }
    thread.start()
    var latencies: [Double] = []
    for s in 0..<samples {
        let key = Int.random(in: 1..<records), revision = 100 + s
        let start = DispatchTime.now()
        a.write(id(key), hostRecord(key, revision: revision))
        check(engineA.sync(), "\(name): change \(s)")
        let wanted = "host-\(key) \(revision)"
        let deadline = Date().addingTimeInterval(30)
        while applied.value[wanted] == nil && Date() < deadline { usleep(200) }
        guard let done = applied.value[wanted] else { print("\(name): change \(s) never reached device B"); exit(1) }
        latencies.append(Double(done.uptimeNanoseconds - start.uptimeNanoseconds) / 1e6)
    }
    stop.value = true
    while thread.isExecuting || !thread.isFinished { usleep(1000) }
    latencies.sort()
    print(String(format: "%@: change on A to applied on B (%@): median %.1f ms, p90 %.1f ms, max %.1f ms (%d changes)", name,
                 waits ? "B waits on NOTIFY" : "B syncs in a loop", latencies[samples / 2], latencies[samples * 9 / 10], latencies.last!, samples))
    backendA.close()
    backendB.close()
}

let dir = TemporaryDirectory("termhost-sync-bench")
defer { dir.remove() }
try measure("folder", make: { FolderBackend(root: dir.path + "/vault", create: true) }, waits: false)

let server = try PostgresServer(in: dir)
defer { server.stop() }
try server.createDatabase("termhost")
let settings = PostgresSettings(host: server.socketDirectory, port: PostgresServer.port, database: "termhost",
                                user: PostgresServer.adminUser, vault: "bench")
try measure("postgresql", make: { PostgresBackend(settings: settings, password: PostgresServer.adminPassword) }, waits: true)
