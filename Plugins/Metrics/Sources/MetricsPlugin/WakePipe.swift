import Glibc

/// A pipe that wakes a poll() loop from another thread (a cancel handler, a stop): `wake()`
/// writes one byte, never blocking; the loop polls `readEnd`. Both ends close-on-exec.
final class WakePipe: Sendable {
    let readEnd: Int32
    private let writeEnd: Int32

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
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Once nobody polls or wakes it any more.
    func close() {
        _ = Glibc.close(readEnd)
        _ = Glibc.close(writeEnd)
    }
}
