import Foundation
import Glibc

/// Runs a notification command: no shell, its arguments as given, stdin, stdout and stderr on
/// /dev/null, an environment of its own (what a desktop notifier needs from the daemon's, and
/// the caller's variables), ended with SIGKILL when it outlives its bound.
enum HookCommand {
    /// The daemon's variables a notifier may need to reach the user's desktop.
    static let passed = ["PATH", "HOME", "USER", "LANG", "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"]

    /// nil once it exited 0; otherwise what happened, for the log.
    static func run(_ path: String, _ arguments: [String], environment: [String], within seconds: Double) -> String? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        let env = passed.compactMap { name in getenv(name).map { "\(name)=\(String(cString: $0))" } } + environment
        var pid: pid_t = 0
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        let rc = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard rc == 0 else { return "could not start: \(String(cString: strerror(rc)))" }
        let deadline = Date().addingTimeInterval(seconds)
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { return "could not be waited for: \(String(cString: strerror(errno)))" }
            if Date() >= deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return "did not end within \(Int(seconds)) s and was killed"
            }
            usleep(50_000)   // a child of ours we poll: SIGCHLD belongs to the host
        }
        let exited = status & 0x7f == 0, code = (status >> 8) & 0xff
        return exited && code == 0 ? nil : exited ? "exited with status \(code)" : "ended by signal \(status & 0x7f)"
    }
}
