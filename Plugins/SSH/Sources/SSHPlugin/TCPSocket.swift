import Glibc
import TermhostSDK

/// A connected TCP socket to host:port with a connect timeout, TCP_NODELAY set (libssh2 never
/// sets it, and interactive latency needs it).
enum TCPSocket {
    static func connect(host: String, port: Int, timeoutSeconds: Int) throws(SSHError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let list else {
            throw SSHError("ssh: Could not resolve hostname \(VisibleText.of(host)): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        var lastError: Int32 = ECONNREFUSED
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let ai = cursor {
            cursor = ai.pointee.ai_next
            let fd = socket(ai.pointee.ai_family, ai.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), ai.pointee.ai_protocol)
            if fd < 0 { lastError = errno; continue }
            let flags = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
            if Glibc.connect(fd, ai.pointee.ai_addr, ai.pointee.ai_addrlen) != 0 && errno != EINPROGRESS {
                lastError = errno
                close(fd)
                continue
            }
            var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            // Milliseconds for poll(), saturated: a caller's seconds must not overflow an Int32.
            let ready = poll(&pfd, 1, Int32(clamping: timeoutSeconds.multipliedReportingOverflow(by: 1000).overflow ? Int.max : timeoutSeconds * 1000))
            var soError: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &len)
            if ready <= 0 || soError != 0 {
                lastError = ready == 0 ? ETIMEDOUT : soError
                close(fd)
                continue
            }
            _ = fcntl(fd, F_SETFL, flags)
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            return fd
        }
        let reason = lastError == ETIMEDOUT ? "Connection timed out" : String(cString: strerror(lastError))
        throw SSHError("ssh: connect to host \(host) port \(port): \(reason)")
    }

    /// A port on 127.0.0.1 that nothing listens on right now (bind to 0, read it back).
    static func freeLoopbackPort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}
