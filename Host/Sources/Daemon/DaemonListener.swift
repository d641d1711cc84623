import Foundation
import Glibc
import TermhostRegistry

/// The daemon's listening socket and the lock that makes it the only daemon of its directory.
///
/// Start-up, in this order: the directory is made or checked (0700, the user's own); the lock
/// file is taken with flock, so a second daemon says "already running (pid N)" and a daemon that
/// died (kill -9) left nothing held; the socket is bound under a temporary name with umask 0177
/// and renamed over the old one, so it is never reachable with a wider mode, and a stale socket
/// of a dead daemon is replaced, never reused. On close the socket is removed only if it is
/// still this daemon's (the same inode).
public final class DaemonListener: Sendable {
    public let address: DaemonAddress
    let fd: Int32
    private let lockFD: Int32
    private let inode: ino_t
    /// False for a socket systemd made and passed (termhostd.socket): systemd keeps it, so a
    /// client's connect while the daemon restarts waits in its queue instead of failing.
    public let ownsSocket: Bool

    /// The sockets waiting to be accepted: beyond it, connects fail at once (the kernel's queue).
    static let backlog: Int32 = 64

    /// `inherited`: a listening socket passed by systemd (SocketActivation), used instead of
    /// binding one, once checked to be a listening Unix socket at `address.socket`.
    public init(_ address: DaemonAddress, inherited: Int32? = nil) throws(DaemonError) {
        self.address = address
        if let refused = PrivateFile.prepare(ownDirectory: address.directory) { throw DaemonError("the daemon's directory: \(refused)") }
        let lockFD = open(address.lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard lockFD >= 0 else { throw .errno("cannot open the daemon's lock \(address.lock)") }
        if let refused = PrivateFile.check(fd: lockFD, path: address.lock, privateMode: 0o600, fix: "chmod 600 \(address.lock)") {
            Glibc.close(lockFD)
            throw DaemonError(refused)
        }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            let holder = DaemonListener.pid(in: lockFD)
            Glibc.close(lockFD)
            throw DaemonError("a daemon is already running\(holder.map { " (pid \($0))" } ?? ""), listening on \(address.socket)")
        }
        let pidText = Array("\(getpid())\n".utf8)
        _ = ftruncate(lockFD, 0)
        _ = pidText.withUnsafeBytes { pwrite(lockFD, $0.baseAddress, $0.count, 0) }

        if let inherited {
            var st = stat()
            let problem = SocketActivation.problem(with: inherited, expected: address.socket)
                ?? (lstat(address.socket, &st) == 0 ? nil : "nothing at \(address.socket)")
            if let problem {
                Glibc.close(lockFD)
                throw DaemonError("the socket systemd passed: \(problem)")
            }
            self.fd = inherited
            self.inode = st.st_ino
            self.lockFD = lockFD
            self.ownsSocket = false
            return
        }
        let temporary = address.directory + "/daemon.sock.\(getpid())"
        let bound: (fd: Int32, inode: ino_t)
        do { bound = try DaemonListener.bind(temporary, address) } catch {
            Glibc.close(lockFD)
            throw error
        }
        guard rename(temporary, address.socket) == 0 else {
            let e = errno
            unlink(temporary)
            Glibc.close(bound.fd)
            Glibc.close(lockFD)
            throw .errno("cannot put the daemon's socket in place at \(address.socket)", e)
        }
        self.fd = bound.fd
        self.inode = bound.inode
        self.lockFD = lockFD
        self.ownsSocket = true
    }

    private static func bind(_ path: String, _ address: DaemonAddress) throws(DaemonError) -> (fd: Int32, inode: ino_t) {
        var target: sockaddr_un
        switch address.socketAddress(of: path) {
        case .success(let a): target = a
        case .failure(let e): throw e
        }
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .errno("cannot make the daemon's socket") }
        let previous = umask(0o177)
        let rc = withUnsafePointer(to: &target) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        let e = errno
        umask(previous)
        guard rc == 0 else {
            Glibc.close(fd)
            throw .errno("cannot bind the daemon's socket at \(path)", e)
        }
        var st = stat()
        guard chmod(path, 0o600) == 0, lstat(path, &st) == 0, listen(fd, backlog) == 0 else {
            let e = errno
            Glibc.close(fd)
            unlink(path)
            throw .errno("cannot listen on the daemon's socket at \(path)", e)
        }
        return (fd, st.st_ino)
    }

    /// The next client and who it is, or nil once the listener was shut down. Clients whose
    /// credentials cannot be read are closed here.
    func accept() -> (fd: Int32, peer: PeerCredentials)? {
        while true {
            let client = DaemonListener.acceptCloseOnExec(fd)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return nil
            }
            guard let peer = PeerCredentials.of(client) else { Glibc.close(client); continue }
            return (client, peer)
        }
    }

    /// accept4 with SOCK_CLOEXEC, so a program the daemon starts at the same moment never
    /// inherits a client's socket (Swift's Glibc module hides accept4: looked up by name).
    private static func acceptCloseOnExec(_ fd: Int32) -> Int32 {
        typealias Accept4 = @convention(c) (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32) -> Int32
        if let symbol = dlsym(nil, "accept4") {
            return unsafeBitCast(symbol, to: Accept4.self)(fd, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
        }
        let client = Glibc.accept(fd, nil, nil)
        if client >= 0 { _ = fcntl(client, F_SETFD, FD_CLOEXEC) }
        return client
    }

    /// Wakes `accept` (which then answers nil) without closing the descriptor under it.
    func shutdown() { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }

    /// Removes the socket if it is still this daemon's, and lets the lock go.
    public func close() {
        var st = stat()
        if ownsSocket && lstat(address.socket, &st) == 0 && st.st_ino == inode { unlink(address.socket) }
        Glibc.close(fd)
        Glibc.close(lockFD)
    }

    private static func pid(in fd: Int32) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: 16)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        return Int32(String(decoding: bytes[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
