import Foundation

/// A fixed number of threads for blocking work (target DNS and connects for -R), so a slow
/// name or an unreachable target never blocks the reactor, and a burst never spawns a thread
/// per stream (seeds: at most four DNS workers).
final class WorkerPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [() -> Void] = []

    init(threads: Int, name: String) {
        for i in 0..<threads {
            let t = Thread { [self] in work() }
            t.name = "\(name).\(i)"
            t.start()
        }
    }

    func submit(_ job: @escaping () -> Void) {
        condition.lock()
        queue.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while queue.isEmpty { condition.wait() }
            let job = queue.removeFirst()
            condition.unlock()
            job()
        }
    }
}

/// Connects to a -R rule's target with a five-second deadline. Blocking: run it on a worker.
enum TargetConnector {
    static func connect(host: String, port: Int, deadlineSeconds: Int32 = 5) throws(ForwardError) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0 else { throw ForwardError("cannot resolve \(host): \(String(cString: gai_strerror(rc)))") }
        defer { freeaddrinfo(list) }
        var reason = "no address"
        var ai = list
        while let a = ai {
            ai = a.pointee.ai_next
            let s = socket(a.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            if s < 0 { reason = Sockets.errorText(); continue }
            Sockets.setNonBlocking(s)
            if Glibc.connect(s, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0 { Sockets.setNoDelay(s); return s }
            if errno == EINPROGRESS {
                var p = pollfd(fd: s, events: Int16(POLLOUT), revents: 0)
                if poll(&p, 1, deadlineSeconds * 1000) == 1 {
                    var error: Int32 = 0
                    var len = socklen_t(MemoryLayout<Int32>.size)
                    _ = getsockopt(s, SOL_SOCKET, SO_ERROR, &error, &len)
                    if error == 0 { Sockets.setNoDelay(s); return s }
                    reason = Sockets.errorText(error)
                } else {
                    reason = "no answer within \(deadlineSeconds) s"
                }
            } else {
                reason = Sockets.errorText()
            }
            Glibc.close(s)
        }
        throw ForwardError("cannot connect to \(ForwardSpec.bracketed(host)) port \(port): \(reason)")
    }
}
