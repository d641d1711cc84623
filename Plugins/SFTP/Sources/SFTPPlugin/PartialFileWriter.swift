import Foundation
import Glibc

/// Writes a download into its partial file on a thread of its own.
///
/// libssh2 1.10 decrypts on the calling thread, one 16-byte block per call, so that thread is
/// the transfer's bottleneck; here it only reads, and hands each full buffer over while it fills
/// the next. All segments of one file share one writer: two threads writing the same file
/// contend for its inode lock, and on two cores their spinning cost more than the second
/// segment gained (Docs/SFTP.md, Speed).
///
/// Each reader takes a `Lane`: two buffers, one filling while the other is written. Bytes count
/// as moved (`onWritten`, on the writer's thread) only once written, so a pause's checkpoint
/// (Segments.prefixEnd) never vouches for bytes still in memory.
final class PartialFileWriter: @unchecked Sendable {
    private let fd: Int32
    private let path: String
    private let queue = DispatchQueue(label: "termhost.sftp.partial-writer")

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    /// A lane of two buffers of `bufferSize` bytes each.
    func lane(bufferSize: Int, onWritten: @escaping @Sendable (Int) -> Void) -> Lane {
        Lane(writer: self, bufferSize: bufferSize, onWritten: onWritten)
    }

    final class Lane: @unchecked Sendable {
        private let writer: PartialFileWriter
        private let onWritten: @Sendable (Int) -> Void
        private let lock = NSLock()
        private let available = DispatchSemaphore(value: 2)
        private let all: [UnsafeMutableRawPointer]
        private var free: [UnsafeMutableRawPointer]
        private var failure: SFTPError?

        fileprivate init(writer: PartialFileWriter, bufferSize: Int, onWritten: @escaping @Sendable (Int) -> Void) {
            self.writer = writer
            self.onWritten = onWritten
            all = (0..<2).map { _ in UnsafeMutableRawPointer.allocate(byteCount: bufferSize, alignment: 64) }
            free = all
        }

        deinit { for b in all { b.deallocate() } }

        /// A buffer to fill: waits while both are being written. Throws the first write failure.
        func next() throws(SFTPError) -> UnsafeMutableRawPointer {
            available.wait()
            let (buffer, failure) = lock.withLock { self.failure == nil ? (free.removeLast(), nil) : (nil, self.failure) }
            guard let buffer else {
                available.signal()
                throw failure!
            }
            return buffer
        }

        /// Gives back a buffer that was not filled.
        func giveBack(_ buffer: UnsafeMutableRawPointer) {
            lock.withLock { free.append(buffer) }
            available.signal()
        }

        /// Queues `count` bytes of `buffer` for the partial file at `offset`; the buffer comes
        /// back to `next()` once written.
        func submit(_ buffer: UnsafeMutableRawPointer, _ count: Int, at offset: UInt64) {
            let writer = self.writer
            // The buffer is this lane's, and untouched by the reader until `next()` hands it out again.
            nonisolated(unsafe) let buffer = buffer
            writer.queue.async { [self] in
                // After a failed write, none: the bytes counted must stay a contiguous prefix,
                // or a pause's checkpoint would vouch for the hole.
                guard lock.withLock({ failure == nil }) else {
                    lock.withLock { free.append(buffer) }
                    available.signal()
                    return
                }
                var outcome: SFTPError?
                do throws(SFTPError) {
                    try LocalFile.writeAll(writer.fd, buffer, count, at: offset, path: writer.path)
                } catch { outcome = error }
                if outcome == nil { onWritten(count) }
                lock.withLock {
                    if let outcome, failure == nil { failure = outcome }
                    free.append(buffer)
                }
                available.signal()
            }
        }

        /// Waits until nothing of this lane is left to write; returns the first write that failed.
        func drain() -> SFTPError? {
            available.wait()
            available.wait()
            available.signal()
            available.signal()
            return lock.withLock { failure }
        }
    }
}
