import Glibc

/// One client's socket, as the daemon's thread for that client uses it: whole frames in, whole
/// frames out. A write that the client does not drain within `writeTimeout` fails, so a client
/// that never reads is detached and never holds the daemon (every other client has its own
/// thread and socket).
struct DaemonConnection {
    let fd: Int32
    private var decoder = DaemonFrameDecoder()
    /// Descriptors the client passed (SCM_RIGHTS) and no request has taken yet; the caller
    /// takes them with `takeDescriptors` or closes them with `closeDescriptors`.
    private(set) var passed: [Int32] = []

    /// How long a reply may wait for the client to read.
    static let writeTimeout = 5
    /// How long a new client has to send its hello.
    static let helloTimeout = 10

    init(fd: Int32) {
        self.fd = fd
        setTimeout(SO_SNDTIMEO, seconds: DaemonConnection.writeTimeout)
    }

    func setTimeout(_ option: Int32, seconds: Int) {
        var t = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, option, &t, socklen_t(MemoryLayout<timeval>.size))
    }

    enum Received: Equatable {
        case frame(DaemonFrame)
        /// The client closed; `truncated` when it stopped inside a frame.
        case closed(truncated: Bool)
        case malformed(String)
        case failed(String)
    }

    /// A whole frame already read, if any, without reading more (a client that polls its
    /// socket asks this first: one read may have brought several frames).
    mutating func buffered() -> Received? {
        switch decoder.next() {
        case .frame(let f): return .frame(f)
        case .malformed(let why): return .malformed(why)
        case .needMore: return nil
        }
    }

    /// The next whole frame.
    mutating func receive() -> Received {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            switch decoder.next() {
            case .frame(let f): return .frame(f)
            case .malformed(let why): return .malformed(why)
            case .needMore: break
            }
            let (n, descriptors) = chunk.withUnsafeMutableBytes { DescriptorPassing.receive(fd, into: $0) }
            passed += descriptors
            // No frame takes more than three: a client passing more (in many small writes) is
            // not let pile the daemon's descriptors up.
            if passed.count > DescriptorPassing.maxDescriptors {
                closeDescriptors()
                return .malformed("more than \(DescriptorPassing.maxDescriptors) descriptors passed before a frame took them")
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                let e = errno
                return e == EAGAIN || e == EWOULDBLOCK ? .failed("sent nothing in time") : .failed(String(cString: strerror(e)))
            }
            if n == 0 { return .closed(truncated: decoder.pendingBytes > 0) }
            decoder.feed(chunk[0..<n])
        }
    }

    /// The descriptors passed so far, now the caller's.
    mutating func takeDescriptors() -> [Int32] {
        defer { passed = [] }
        return passed
    }

    /// Closes descriptors passed with a frame that takes none (a client's mistake, or malice:
    /// a descriptor held forever would be a leak).
    mutating func closeDescriptors() {
        for d in takeDescriptors() { close(d) }
    }

    /// Sends a frame whole; false when the client did not take it in time or went away.
    func send(_ frame: DaemonFrame) -> Bool { sendEncoded(frame.encoded()) }

    /// Sends an encoded frame whole (see `send`).
    func sendEncoded(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }
}
