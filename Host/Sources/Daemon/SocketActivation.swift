import Foundation
import Glibc

/// systemd's socket activation (sd_listen_fds(3)), read without libsystemd: with
/// `termhostd.socket` systemd owns the listening socket and passes it as descriptor 3, naming
/// the process meant to take it in LISTEN_PID and the count in LISTEN_FDS. Connections made
/// while the daemon is down or restarting wait in the socket's queue.
public enum SocketActivation {
    /// The first passed descriptor.
    static let firstDescriptor: Int32 = 3

    /// The listening socket passed to this process, or nil when none was (the variables are
    /// absent, or name another pid: they were inherited from a parent that took them). Either
    /// way the variables are removed, so no child inherits them. More than one socket is refused.
    public static func passedSocket(_ env: [String: String] = ProcessInfo.processInfo.environment) -> Result<Int32?, DaemonError> {
        defer { for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) } }
        guard let pidText = env["LISTEN_PID"], let pid = Int32(pidText), pid == getpid(), let countText = env["LISTEN_FDS"] else {
            return .success(nil)
        }
        guard let count = Int(countText), count >= 1 else { return .success(nil) }
        guard count == 1 else {
            return .failure(DaemonError("systemd passed \(count) sockets; termhostd.socket declares one (ListenStream=%t/termhost/daemon.sock)"))
        }
        _ = fcntl(firstDescriptor, F_SETFD, FD_CLOEXEC)
        return .success(firstDescriptor)
    }

    /// Why `fd` is not a listening Unix stream socket bound at `expected`, or nil.
    static func problem(with fd: Int32, expected: String) -> String? {
        func option(_ name: Int32) -> Int32? {
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            return getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 ? value : nil
        }
        guard option(SO_DOMAIN) == AF_UNIX, option(SO_TYPE) == Int32(SOCK_STREAM.rawValue), option(SO_ACCEPTCONN) == 1 else {
            return "descriptor \(fd) is not a listening Unix stream socket"
        }
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let rc = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        guard rc == 0 else { return "descriptor \(fd): \(String(cString: strerror(errno)))" }
        let path = withUnsafeBytes(of: address.sun_path) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        guard path == expected else {
            return "it is bound at \(path.isEmpty ? "no path" : path), not at \(expected): check ListenStream in termhostd.socket and XDG_RUNTIME_DIR"
        }
        return nil
    }
}
