import Foundation
import Glibc
import TermhostDaemon
import TermhostRuntime

/// Connecting to the daemon for a command that needs it, starting it first when none runs
/// (like tmux starting its server). `--no-autostart` turns the start into an error that says
/// how to start one.
///
/// The daemon is started as `termhost daemon run` in a session of its own (setsid: no
/// controlling terminal, so closing this terminal does not reach it), stdin from /dev/null,
/// its log appended to daemon.log beside the host's log. A systemd user socket unit, when
/// installed, makes this unnecessary: the socket then always answers.
enum DaemonAutostart {
    /// How long a starting daemon may take to answer (it loads and probes every plugin).
    static let startTimeout = 60.0

    static func connect(_ client: String, _ g: GlobalOptions, autostart: Bool) throws(DaemonError) -> DaemonClient {
        let address = DaemonAddress.standard()
        do {
            return try DaemonClient(address, client: client)
        } catch where error.notRunning {
            guard autostart else {
                throw DaemonError("\(error.description); start it with 'termhost daemon' (or 'systemctl --user start termhostd.socket'), or leave out --no-autostart")
            }
        }
        let log = logPath(g)
        let pid = try spawn(log: log)
        let deadline = Date().addingTimeInterval(startTimeout)
        while Date() < deadline {
            if let client = try? DaemonClient(address, client: client) { return client }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                // Another client may have started one a moment before (this one then refused
                // to start beside it): that one answers.
                if let client = try? DaemonClient(address, client: client) { return client }
                throw DaemonError("the daemon did not start (it exited with status \(status >> 8)); its log: \(log ?? "none")")
            }
            usleep(50_000)
        }
        throw DaemonError("the daemon started (pid \(pid)) but did not answer within \(Int(startTimeout)) s; its log: \(log ?? "none")")
    }

    /// daemon.log in the directory of the host's log, or nil when the host keeps no log.
    static func logPath(_ g: GlobalOptions) -> String? {
        guard let hostLog = g.runtimeOptions().paths.log else { return nil }
        return (hostLog as NSString).deletingLastPathComponent + "/daemon.log"
    }

    /// This process's open descriptors (from /proc/self/fd, read before the spawn).
    private static func openDescriptors() -> [Int32] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return [] }
        return names.compactMap { Int32($0) }.filter { fcntl($0, F_GETFD) >= 0 }
    }

    /// glibc's POSIX_SPAWN_SETSID (spawn.h declares it only under _GNU_SOURCE).
    private static let spawnSetsid: Int32 = 0x80

    private static func spawn(log: String?) throws(DaemonError) -> pid_t {
        var path = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &path, Int(PATH_MAX))
        guard n > 0 else { throw DaemonError("cannot find this program to start the daemon: \(String(cString: strerror(errno)))") }
        path[n] = 0
        if let log { try? FileManager.default.createDirectory(atPath: (log as NSString).deletingLastPathComponent, withIntermediateDirectories: true) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, log ?? "/dev/null", O_WRONLY | O_APPEND | O_CREAT, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 2, 1)
        // Nothing else this process inherited stays open in the long-lived daemon (a pipe
        // another program waits on for its end, a make jobserver): only 0, 1 and 2.
        for fd in openDescriptors() where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(spawnSetsid | POSIX_SPAWN_SETSIGMASK))
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("termhost"), strdup("daemon"), strdup("run"), nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = path.withUnsafeBufferPointer { posix_spawn(&pid, $0.baseAddress!, &actions, &attributes, argv, environ) }
        guard rc == 0 else { throw DaemonError("cannot start the daemon: \(String(cString: strerror(rc)))") }
        return pid
    }
}
