import Foundation
import Glibc
import TestSupport

/// A TCP relay on loopback that holds each chunk `delay` seconds before passing it on, both
/// ways: a far server behind a local tunnel, whose own socket has loopback's round trip.
final class SlowRelay: @unchecked Sendable {
    private let listener = LoopbackListener()
    private let lock = NSLock()
    private var sockets: [Int32] = []
    private var stopped = false
    var port: Int { listener.port }

    init(to targetPort: Int, delay: Double) {
        let listener = self.listener
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener.fd, nil, nil)
                guard client >= 0 else {
                    // stop() shut the listener down; closed here, never under a running accept().
                    listener.close()
                    return
                }
                guard let server = LoopbackListener.connect(to: targetPort) else {
                    close(client)
                    continue
                }
                guard track(client, server) else {
                    close(client)
                    close(server)
                    continue
                }
                // The second pump to finish closes both sockets: never while the other uses them.
                let finished = Counter()
                let done: @Sendable () -> Void = { [self] in
                    guard finished.increment() == 2 else { return }
                    lock.withLock {
                        sockets.removeAll { $0 == client || $0 == server }
                        close(client)
                        close(server)
                    }
                }
                Thread.detachNewThread { SlowRelay.pump(from: client, to: server, delay: delay); done() }
                Thread.detachNewThread { SlowRelay.pump(from: server, to: client, delay: delay); done() }
            }
        }
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func increment() -> Int { lock.withLock { value += 1; return value } }
    }

    /// Ends the relay and every connection through it.
    /// Under the lock: a pump closes its sockets under it too, so none is shut down after its
    /// number went to another test's socket.
    func stop() {
        lock.withLock {
            stopped = true
            sockets.forEach { shutdown($0, Int32(SHUT_RDWR)) }
            shutdown(listener.fd, Int32(SHUT_RDWR))
        }
    }

    private func track(_ a: Int32, _ b: Int32) -> Bool {
        lock.withLock {
            guard !stopped else { return false }
            sockets += [a, b]
            return true
        }
    }

    /// Copies until end of file, sleeping before each chunk is passed on; then half-closes.
    private static func pump(from source: Int32, to target: Int32, delay: Double) {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = read(source, &chunk, chunk.count)
            guard n > 0 else { break }
            usleep(useconds_t(delay * 1_000_000))
            var sent = 0
            while sent < n {
                let m = chunk[sent..<n].withUnsafeBytes { send(target, $0.baseAddress, n - sent, Int32(MSG_NOSIGNAL)) }
                guard m > 0 else { shutdown(source, Int32(SHUT_RDWR)); return }
                sent += m
            }
        }
        shutdown(target, Int32(SHUT_WR))
    }
}
