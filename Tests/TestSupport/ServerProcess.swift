import Glibc
import TestSupportC

/// Starting and ending a test server (sshd, dropbear), the same way for each.
enum ServerProcess {
    /// Starts `args[0]` with `args` as a child subreaper (see test_spawn.h): a command whose
    /// SSH session ended (its client was killed, the connection dropped) stays below the server
    /// instead of becoming init's, so `stop` ends it too. stdin is /dev/null, stdout and stderr
    /// are appended to `log`, no other descriptor of the test process is inherited.
    static func spawn(_ args: [String], log: String) throws -> pid_t {
        let argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let pid = termhost_test_spawn_subreaper(args[0], argv, log)
        guard pid > 0 else {
            throw Shell.Failure(description: "cannot start \(args[0]): \(String(cString: strerror(errno)))")
        }
        return pid
    }

    /// Ends it with every session it forked and every command those run (a listener that
    /// exits leaves its sessions running, each in a session of its own), then reaps it; pid
    /// becomes 0. Nothing happens for 0.
    static func stop(_ pid: inout pid_t) {
        guard pid > 0 else { return }
        ProcessTree.kill(pid)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        pid = 0
    }

    /// Ends it the hard way, as a crash or a reboot ends live sessions: no process of the
    /// server gets to say goodbye to a client. The same as `stop`, which already kills every
    /// process of the tree at once; kept as its own name for what the tests mean.
    static func crash(_ pid: inout pid_t) {
        stop(&pid)
    }
}
