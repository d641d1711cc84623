import Glibc

/// Ending a test server started as a child process (sshd, dropbear), the same way for each.
enum ServerProcess {
    /// SIGTERM, then reaps it; pid becomes 0. Nothing happens for 0.
    static func stop(_ pid: inout pid_t) {
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        pid = 0
    }

    /// Kills it the hard way, its per-connection processes first (as a crash or a reboot would
    /// end live sessions), then reaps it; pid becomes 0.
    static func crash(_ pid: inout pid_t) {
        guard pid > 0 else { return }
        _ = try? Shell.run("/usr/bin/pkill", ["-KILL", "-P", String(pid)])
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        pid = 0
    }
}
