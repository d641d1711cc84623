import Glibc
import Synchronization

/// A pipe that wakes a poll() loop from another thread (a cancel handler, a stop): `wake()`
/// writes one byte, never blocking; the loop polls `readEnd`. Both ends close-on-exec.
final class WakePipe: Sendable {
    let readEnd: Int32
    private let writeEnd: Int32
    /// Once closed, a late wake() writes nowhere (its number may be another file's by then).
    private let closed = Mutex(false)

    init?() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    func wake() {
        closed.withLock { isClosed in
            guard !isClosed else { return }
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
        }
    }

    /// Once nobody polls it any more. Idempotent.
    func close() {
        closed.withLock { isClosed in
            guard !isClosed else { return }
            isClosed = true
            _ = Glibc.close(readEnd)
            _ = Glibc.close(writeEnd)
        }
    }
}
