import Glibc

/// A TCP listener for a -L or -D rule on the reactor. SO_REUSEADDR (a restarted run rebinds
/// a port whose old connections are in TIME_WAIT), never SO_REUSEPORT (two runs must not share
/// a port silently: the second one fails with "Address already in use").
final class LocalListener: ReactorHandler, @unchecked Sendable {
    let fd: Int32
    let port: Int
    private let reactor: Reactor
    private let onAccept: (Int32) -> Void
    /// Told once when accept starts failing for want of descriptors (with the system's
    /// reason), and once when it accepts again.
    var onExhausted: (String) -> Void = { _ in }
    var onRecovered: () -> Void = {}
    /// Out of descriptors: not polled until the pause timer ends (see `ready`).
    private var paused = false
    private var exhausted = false
    private var pauseTimer: Int?
    private var closed = false

    /// How long a listener rests when accept finds no free descriptor. The connection stays in
    /// the kernel's backlog meanwhile (nothing is lost), and polling it again at once would
    /// only spin: the descriptor it needs comes back when some stream ends.
    static let exhaustedPause = 0.1

    /// Binds and listens; the error names the address and the system's reason.
    init(reactor: Reactor, host: String, port: Int, onAccept: @escaping (Int32) -> Void) throws(ForwardError) {
        self.reactor = reactor
        self.onAccept = onAccept
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let ai = list else {
            throw ForwardError("cannot listen on \(ForwardSpec.bracketed(host)):\(port): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        let s = socket(ai.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard s >= 0 else { throw ForwardError("cannot listen on \(host):\(port): socket: \(Sockets.errorText())") }
        var one: Int32 = 1
        _ = setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(s, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0, listen(s, 128) == 0 else {
            let reason = Sockets.errorText()
            Glibc.close(s)
            throw ForwardError("cannot listen on \(ForwardSpec.bracketed(host)):\(port): \(reason)")
        }
        Sockets.setNonBlocking(s)
        var addr = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &len) } }
        let bound = withUnsafePointer(to: &addr) { p -> UInt16 in
            p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port }   // same offset for IPv6
        }
        fd = s
        self.port = Int(UInt16(bigEndian: bound))
    }

    /// Starts accepting. [reactor]
    func start() { reactor.add(fd, self) }

    /// Stops accepting and frees the port. [reactor]
    func close() {
        guard !closed else { return }
        closed = true
        if let pauseTimer { reactor.cancelTimer(pauseTimer) }
        reactor.remove(fd)
        Glibc.close(fd)
    }

    func interest(_ fd: Int32) -> Int16 { paused ? 0 : Int16(POLLIN) }

    func ready(_ fd: Int32, _ revents: Int16) {
        // A bounded batch per wake-up, so a connection storm cannot starve the pumps.
        for _ in 0..<64 {
            let c = accept(fd, nil, nil)
            if c < 0 {
                let code = errno
                switch code {
                case EINTR, ECONNABORTED: continue   // that client gave up; the next may be there
                case EMFILE, ENFILE, ENOBUFS, ENOMEM: return pause(code)
                default: return                      // EAGAIN: the backlog is empty
                }
            }
            if exhausted {
                exhausted = false
                onRecovered()
            }
            _ = fcntl(c, F_SETFD, FD_CLOEXEC)
            Sockets.setNonBlocking(c)
            Sockets.setNoDelay(c)
            onAccept(c)
        }
    }

    /// No descriptor for the waiting client: stop polling this listener for a moment (only
    /// this one: the others, and every stream, go on), then try again. [reactor]
    private func pause(_ code: Int32) {
        if !exhausted {
            exhausted = true
            onExhausted(Sockets.errorText(code))
        }
        paused = true
        pauseTimer = reactor.after(LocalListener.exhaustedPause) { [weak self] in
            guard let self else { return }
            self.paused = false
            self.pauseTimer = nil
        }
    }
}
