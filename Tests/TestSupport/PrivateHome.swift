import Foundation

/// Starts a test SSH server whose sessions see a directory of the test as the home of the user
/// the tests run as: the server runs in a mount namespace of its own (`unshare --mount`), where
/// that directory is bind-mounted over the real home. The real home is never read or touched.
///
/// Why: sshd and Dropbear start every remote command through the user's shell, and Debian's
/// bash then runs the user's ~/.bashrc (login shells also ~/.profile). Whatever the machine's
/// user keeps there (pyenv, conda, a stale lock that makes each shell wait 60 s) would become part
/// of every test. With a private home the sessions start from an empty one, the same on every
/// machine. It takes root (a mount namespace); elsewhere `wrap` returns the command unchanged.
public enum PrivateHome {
    public static var available: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
    }

    /// The home directory the password database gives the user the tests run as.
    static func userHome() throws -> String {
        guard let user = getpwuid(getuid()) else { throw Shell.Failure(description: "no password entry for uid \(getuid())") }
        return String(cString: user.pointee.pw_dir)
    }

    /// `command` run with `home` mounted over the user's home. unshare and sh each exec the next
    /// program, so the process started is the server itself (its pid is the server's).
    public static func wrap(_ command: [String], home: String) throws -> [String] {
        guard available else { return command }
        return ["/usr/bin/unshare", "--mount", "--propagation", "private", "--",
                "/bin/sh", "-c", "mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"", "sh", home, try userHome()]
            + command
    }
}
