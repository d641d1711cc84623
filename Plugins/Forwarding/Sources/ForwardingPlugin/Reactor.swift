import Foundation
import Glibc

/// Something the reactor polls: it says which events it wants for each of its descriptors and
/// handles them when they come. Both calls run on the reactor thread only.
protocol ReactorHandler: AnyObject {
    func interest(_ fd: Int32) -> Int16
    func ready(_ fd: Int32, _ revents: Int16)
}

/// The one thread that moves bytes for every local socket of the plugin (listeners, SOCKS
/// handshakes, stream pumps). poll() over the descriptors' current interests: a handler pauses
/// a side simply by not asking for POLLIN, so backpressure needs no registration calls.
/// Blocking work (channel opens, target connects) never runs here.
final class Reactor: @unchecked Sendable {
    private var handlers: [Int32: ReactorHandler] = [:]   // reactor thread only
    private let lock = NSLock()
    private var inbox: [() -> Void] = []                    // guarded by lock
    private let wake: (read: Int32, write: Int32)
    /// One scratch buffer for reads: everything here runs on one thread.
    let scratch = UnsafeMutableRawPointer.allocate(byteCount: Pump.chunk, alignment: 16)

    init() {
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wake = (fds[0], fds[1])
        let thread = Thread { [self] in loop() }
        thread.name = "termhost.forwarding.reactor"
        thread.start()
    }

    /// Runs work on the reactor thread soon. [any-thread]
    func post(_ work: @escaping () -> Void) {
        lock.lock()
        inbox.append(work)
        lock.unlock()
        var one: UInt8 = 1
        _ = write(wake.write, &one, 1)
    }

    /// [reactor]
    func add(_ fd: Int32, _ handler: ReactorHandler) { handlers[fd] = handler }
    /// Forget fd; the caller closes it after. [reactor]
    func remove(_ fd: Int32) { handlers.removeValue(forKey: fd) }

    // MARK: Timers (SOCKS handshake deadlines, a listener's pause when descriptors run out)

    private var timers: [Int: (at: Double, work: () -> Void)] = [:]   // reactor thread only
    private var lastTimer = 0

    /// Runs work on the reactor thread after `seconds`; the id cancels it. [reactor]
    @discardableResult
    func after(_ seconds: Double, _ work: @escaping () -> Void) -> Int {
        lastTimer &+= 1
        timers[lastTimer] = (Reactor.now() + seconds, work)
        return lastTimer
    }

    /// [reactor]
    func cancelTimer(_ id: Int) { timers.removeValue(forKey: id) }

    /// Seconds on the monotonic clock (the wall clock may jump).
    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// Milliseconds poll may sleep: until the nearest timer, or forever without one.
    private func pollTimeout() -> Int32 {
        guard let next = timers.values.lazy.map(\.at).min() else { return -1 }
        return Int32(max(0, min(60_000, ((next - Reactor.now()) * 1000).rounded(.up))))
    }

    private func fireDueTimers() {
        guard !timers.isEmpty else { return }
        let now = Reactor.now()
        for (id, t) in timers.sorted(by: { $0.value.at < $1.value.at }) where t.at <= now {
            // A timer fired earlier in this pass may have cancelled this one.
            guard timers.removeValue(forKey: id) != nil else { continue }
            t.work()
        }
    }

    private func loop() {
        var fds: [pollfd] = []
        while true {
            lock.lock()
            let work = inbox
            inbox = []
            lock.unlock()
            for w in work { w() }
            fds.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0))
            for (fd, h) in handlers {
                let events = h.interest(fd)
                if events != 0 { fds.append(pollfd(fd: fd, events: events, revents: 0)) }
            }
            let n = poll(&fds, nfds_t(fds.count), pollTimeout())
            fireDueTimers()
            if n <= 0 { continue }
            if fds[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 256)
                while read(wake.read, &drain, drain.count) > 0 {}
            }
            for p in fds.dropFirst() where p.revents != 0 {
                // A handler may have removed (and closed) this fd while serving an earlier one.
                handlers[p.fd]?.ready(p.fd, p.revents)
            }
        }
    }
}

/// Small socket helpers shared by listeners, pumps and connectors.
enum Sockets {
    static func setNonBlocking(_ fd: Int32) { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }

    /// Interactive streams should not wait for Nagle; bulk ones lose nothing by it.
    static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }
}
