import Foundation

/// A real PostgreSQL 15 server (Debian's `postgresql` package) in a private temporary data
/// directory, listening on a Unix socket in that directory and, without `tls`, on no TCP port,
/// so nothing to pick or to race for. Started by the tests, stopped by `stop()`; `restart()`
/// keeps the data.
///
/// With `tls`, it also listens on 127.0.0.1 with TLS only: pg_hba.conf has a `hostssl` line
/// (SCRAM) and no `host` line, so a client that drops TLS cannot log in, and log_connections
/// records whether each session used SSL. The server binds its TCP port itself: a random
/// candidate, and another one when the server reports it in use.
///
/// PostgreSQL refuses to run as root, and the tests run as root here: then the data directory
/// belongs to `nobody` and the server runs as `nobody` through `setpriv`, which execs (the pid is
/// the postmaster's own). As any other user it runs as that user. The superuser (`admin`) and
/// every role made by `createRole` log in with SCRAM passwords, as a team's server would.
/// One `initdb` per test process: later servers copy that cluster, which takes a fraction of it.
public final class PostgresServer {
    public static let bin = "/usr/lib/postgresql/15/bin"
    /// The port number of the Unix socket when the server has no TCP listener.
    public static let port = 5432
    public static let adminUser = "admin"
    public static let adminPassword = "Admin-Pw-1"

    public let directory: String
    /// The directory holding the server's socket: what libpq takes as `host`.
    public let socketDirectory: String
    public private(set) var pid: pid_t = 0
    /// The TCP port on 127.0.0.1 (nil without `tls`); the Unix socket carries the same number.
    public private(set) var tcpPort: Int?
    private let tls: TLSFiles?

    /// The server's certificate and key (PEM files), copied into the server's directory with
    /// the key at 0600 and owned by the server's user, as PostgreSQL requires.
    public struct TLSFiles: Sendable {
        public let certificate: String
        public let key: String
        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }

    /// The port libpq and psql use, TCP or Unix socket.
    public var listenPort: Int { tcpPort ?? PostgresServer.port }

    private var dataDirectory: String { directory + "/data" }

    /// `firstPorts`: TCP ports tried before random ones (a test of the retry holds one of them).
    public init(in dir: TemporaryDirectory, tls: TLSFiles? = nil, firstPorts: [Int] = []) throws {
        directory = dir.sub("postgres-\(Int.random(in: 0..<1_000_000))")
        socketDirectory = directory + "/socket"
        self.tls = tls.map { [directory] _ in TLSFiles(certificate: directory + "/server.crt", key: directory + "/server.key") }
        try PostgresServer.runAsOwner("/bin/chmod", ["0755", dir.path])   // nobody must reach its files
        try PostgresServer.makeOwned(directory)
        try PostgresServer.makeOwned(socketDirectory)
        let template = try PostgresServer.template()
        let copy = try Shell.run("/bin/cp", ["-a", template, dataDirectory])
        guard copy.status == 0 else { throw Shell.Failure(description: "cannot copy the cluster: \(copy.output)") }
        guard let tls, let copied = self.tls else {
            try spawn()
            return
        }
        try PostgresServer.copyOwned(tls.certificate, to: copied.certificate, mode: "0644")
        try PostgresServer.copyOwned(tls.key, to: copied.key, mode: "0600")
        let hba = directory + "/pg_hba.conf"
        _ = FileManager.default.createFile(atPath: hba, contents: Data("""
            local   all all              scram-sha-256
            hostssl all all 127.0.0.1/32 scram-sha-256

            """.utf8))
        try PostgresServer.copyOwned(hba, to: hba, mode: "0600")
        var attempt = 1, candidates = firstPorts
        while true {
            // Random ones below Linux's ephemeral range, where kernel-chosen ports are not.
            tcpPort = candidates.isEmpty ? Int.random(in: 10_000..<32_768) : candidates.removeFirst()
            do {
                try spawn()
                return
            } catch is PortTaken where attempt < 8 {
                attempt += 1
            }
        }
    }

    /// The server could not bind its TCP port: another program holds it.
    struct PortTaken: Error {}

    deinit { stop() }

    /// Fast shutdown (SIGINT): open sessions are ended, as an administrator's restart would.
    /// Any backend or helper of the server still running once the postmaster has gone (none
    /// should; a test must not find out by a leftover process) is killed.
    public func stop() {
        guard pid > 0 else { return }
        let members = ProcessTree.members(of: pid)
        kill(pid, SIGINT)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        ProcessTree.kill(members)
        pid = 0
    }

    /// Starts the server again on the same data directory after `stop()`.
    public func restart() throws {
        guard pid == 0 else { return }
        try spawn()
    }

    public var log: String { (try? String(contentsOfFile: directory + "/postgres.log", encoding: .utf8)) ?? "" }

    /// Runs SQL through psql as the superuser; stdout is psql's unaligned, tuples-only output.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        let r = try Shell.run(PostgresServer.bin + "/psql",
                              ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", socketDirectory, "-p", String(listenPort),
                               "-U", PostgresServer.adminUser, "-d", database, "-c", sql],
                              environment: ["PGPASSWORD": PostgresServer.adminPassword, "PATH": "/usr/bin:/bin"])
        guard r.status == 0 else { throw Shell.Failure(description: "psql failed: \(r.stderr)") }
        return r.stdout
    }

    /// Creates a login role with a password (a team member's own role).
    public func createRole(_ name: String, password: String) throws {
        try psql("CREATE ROLE \"\(name)\" LOGIN PASSWORD '\(password)'")
    }

    /// Creates a database owned by the superuser.
    public func createDatabase(_ name: String) throws {
        try psql("CREATE DATABASE \"\(name)\"")
    }

    private func spawn() throws {
        let logPath = directory + "/postgres.log"
        if !FileManager.default.fileExists(atPath: logPath) { try PostgresServer.makeOwnedFile(logPath) }
        let logStart = (try? FileManager.default.attributesOfItem(atPath: logPath)[.size] as? Int) ?? 0
        var args = ["-D", dataDirectory, "-k", socketDirectory, "-p", String(listenPort), "-c", "logging_collector=off"]
        if let tls {
            args += ["-c", "listen_addresses=127.0.0.1", "-c", "ssl=on", "-c", "ssl_cert_file=" + tls.certificate,
                     "-c", "ssl_key_file=" + tls.key, "-c", "hba_file=\(directory)/pg_hba.conf", "-c", "log_connections=on"]
        } else {
            args += ["-c", "listen_addresses="]
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_APPEND, 0)
        posix_spawn_file_actions_addopen(&actions, 2, logPath, O_WRONLY | O_APPEND, 0)
        guard Shell.closeInheritedDescriptors(&actions) else { throw Shell.Failure(description: "cannot start postgres: no closefrom") }
        let argv = PostgresServer.asOwner(PostgresServer.bin + "/postgres", args)
        let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        guard posix_spawn(&pid, argv[0], &actions, nil, cArgs, environ) == 0 else {
            throw Shell.Failure(description: "cannot start postgres")
        }
        var exited = false
        let ready = Wait.until {
            var status: Int32 = 0
            exited = waitpid(pid, &status, WNOHANG) == pid
            if exited { return true }
            let r = try? Shell.run(PostgresServer.bin + "/pg_isready", ["-q", "-h", socketDirectory, "-p", String(listenPort)])
            return r?.status == 0
        }
        guard ready && !exited else {
            if exited { pid = 0 } else { stop() }
            if exited && String(log.utf8.dropFirst(logStart))?.contains("Address already in use") == true { throw PortTaken() }
            throw Shell.Failure(description: "postgres did not start: \(log)")
        }
    }

    // MARK: The cluster template and the unprivileged user

    private static let lock = NSLock()
    nonisolated(unsafe) private static var templatePath: String?
    nonisolated(unsafe) private static var templateRoot: String?

    /// One `initdb` per process, into a directory kept until the process ends.
    private static func template() throws -> String {
        lock.lock()
        defer { lock.unlock() }
        if let templatePath { return templatePath }
        let dir = TemporaryDirectory("termhost-postgres-template")
        templateRoot = dir.path
        atexit { if let root = PostgresServer.templateRoot { try? FileManager.default.removeItem(atPath: root) } }
        try runAsOwner("/bin/chmod", ["0755", dir.path])
        let data = dir.path + "/data"
        try makeOwned(data)
        let pwfile = dir.path + "/pw"
        _ = FileManager.default.createFile(atPath: pwfile, contents: Data(adminPassword.utf8))
        try runAsOwner("/bin/chmod", ["0644", pwfile])
        let argv = asOwner(bin + "/initdb", ["-D", data, "-U", adminUser, "--pwfile=" + pwfile, "--auth=scram-sha-256",
                                             "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync"])
        let r = try Shell.run(argv[0], Array(argv.dropFirst()), timeout: 120)
        guard r.status == 0 else { throw Shell.Failure(description: "initdb failed: \(r.output)") }
        templatePath = data
        return data
    }

    private static var runsAsRoot: Bool { getuid() == 0 }

    /// The command line that runs `program` as the server's owner (nobody when we are root).
    private static func asOwner(_ program: String, _ args: [String]) -> [String] {
        runsAsRoot ? ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", program] + args : [program] + args
    }

    private static func runAsOwner(_ program: String, _ args: [String]) throws {
        let r = try Shell.run(program, args)
        guard r.status == 0 else { throw Shell.Failure(description: "\(program) failed: \(r.output)") }
    }

    /// A directory owned by the server's user, mode 0700 (postgres insists on it for data).
    private static func makeOwned(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        if runsAsRoot { try runAsOwner("/bin/chown", ["nobody:nogroup", path]) }
        try runAsOwner("/bin/chmod", ["0700", path])
    }

    /// A copy of `source` at `path` (which may be `source`) owned by the server's user.
    private static func copyOwned(_ source: String, to path: String, mode: String) throws {
        if source != path { try runAsOwner("/bin/cp", [source, path]) }
        if runsAsRoot { try runAsOwner("/bin/chown", ["nobody:nogroup", path]) }
        try runAsOwner("/bin/chmod", [mode, path])
    }

    private static func makeOwnedFile(_ path: String) throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        if runsAsRoot { try runAsOwner("/bin/chown", ["nobody:nogroup", path]) }
    }
}
