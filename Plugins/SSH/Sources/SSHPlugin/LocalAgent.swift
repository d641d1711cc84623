import Glibc
import TermhostSDK

/// The user's ssh-agent at their `$SSH_AUTH_SOCK` (ConnectionPrompts.agentSocket), as forwarded
/// agent channels reach it.
///
/// Why the checks: a forwarded channel lets the server (and anyone with root there) ask this
/// agent to sign, so the path must lead to a Unix socket owned by this user, never to one that
/// another user put where the variable points. The path is opened once (`O_PATH`, following a
/// symbolic link as ssh does, since agents are often reached through one), the object it names is
/// checked with `fstat`, and the connection goes through `/proc/self/fd/N`, that same object:
/// a file swapped in after the check is never connected to.
enum LocalAgent {
    /// Why the agent cannot be reached, as the warning names it.
    struct Unavailable: Error {
        let reason: String
    }

    /// Linux's O_PATH (open the name without reading it; the same value on every architecture
    /// but alpha, parisc and sparc), which Glibc's module leaves out (it is _GNU_SOURCE-only).
    private static let openPathOnly: Int32 = 0o10000000

    /// A connected, non-blocking, close-on-exec socket to the agent at `path`.
    static func connect(_ path: String?) throws(Unavailable) -> Int32 {
        guard let path else { throw Unavailable(reason: "agent not present (SSH_AUTH_SOCK is not set)") }
        let shown = "SSH_AUTH_SOCK '\(VisibleText.of(path))'"
        let object = open(path, openPathOnly | O_CLOEXEC)
        guard object >= 0 else { throw Unavailable(reason: "\(shown): \(String(cString: strerror(errno)))") }
        defer { close(object) }
        var st = stat()
        guard fstat(object, &st) == 0 else { throw Unavailable(reason: "\(shown): \(String(cString: strerror(errno)))") }
        guard st.st_mode & S_IFMT == S_IFSOCK else { throw Unavailable(reason: "\(shown) is not a socket") }
        guard st.st_uid == getuid() else {
            throw Unavailable(reason: "\(shown) belongs to uid \(st.st_uid), not to you (uid \(getuid()))")
        }
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard socket >= 0 else { throw Unavailable(reason: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name = Array("/proc/self/fd/\(object)".utf8)   // well within sun_path's 108 bytes
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            // Non-blocking: EAGAIN is an agent whose queue is full, as good as absent here.
            let why = String(cString: strerror(errno))
            close(socket)
            throw Unavailable(reason: "cannot connect to the agent at \(shown): \(why)")
        }
        return socket
    }
}
