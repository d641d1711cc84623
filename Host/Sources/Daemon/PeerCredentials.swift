import Glibc

/// Who is at the other end of a Unix socket, as the kernel says (SO_PEERCRED): not what the
/// peer claims, so it cannot be forged by the client.
struct PeerCredentials: Equatable, Sendable {
    var pid: pid_t
    var uid: uid_t
    var gid: gid_t

    /// struct ucred, declared here because Glibc hides it without _GNU_SOURCE.
    private struct UCred {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
    }

    static func of(_ fd: Int32) -> PeerCredentials? {
        var cred = UCred()
        var length = socklen_t(MemoryLayout<UCred>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) == 0, Int(length) == MemoryLayout<UCred>.size else { return nil }
        return PeerCredentials(pid: cred.pid, uid: cred.uid, gid: cred.gid)
    }
}
