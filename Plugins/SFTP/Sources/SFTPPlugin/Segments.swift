import Foundation

/// One transfer split into contiguous segments that run in parallel, and what each has moved.
/// A download runs one segment per connection: libssh2 1.10 encrypts and decrypts on the
/// calling thread one 16-byte block per call (Docs/SSH.md), so a single connection is bound to
/// one core, and a large file on two connections uses two. An upload runs several per
/// connection too, on channels of their own (UploadLanes): the server's window of one channel
/// caps what one channel sends per round trip.
///
/// A pause vouches only for the contiguous prefix from the start (`prefixEnd`): bytes a later
/// segment wrote beyond a gap are not in the checkpoint, and resume truncates to it. That is the
/// same rule as a checkpoint that hashed fewer bytes than were written.
final class Segments: @unchecked Sendable {
    /// Below this, another connection costs more than it brings.
    static let minimum: UInt64 = 32 << 20
    /// An upload's segments are at least this long. Small, so that the channels end close
    /// together (with 16 MiB segments the last ones ran alone for up to 0.4 s at 50 ms); the
    /// further channels go on to their next segment without a pause (PipeLane), and the first
    /// one drains its pipeline at each end (one round trip per 4 MiB).
    static let channelMinimum: UInt64 = 4 << 20

    let ranges: [Range<UInt64>]
    private let control: TransferControl
    private let lock = NSLock()
    private var done: [UInt64]
    private var failure: SFTPError?

    init(from start: UInt64, to end: UInt64, parts: Int, minimum: UInt64 = Segments.minimum, control: TransferControl) {
        self.control = control
        let length = end > start ? end - start : 0
        let count = max(1, min(parts, Int(length / minimum)))
        let step = length / UInt64(count)
        ranges = (0..<count).map { i in
            let low = start + UInt64(i) * step
            return low..<(i == count - 1 ? max(end, start) : low + step)
        }
        done = Array(repeating: 0, count: count)
    }

    /// Runs body(index, range, isLast) for every segment, in parallel. Returns the bytes moved,
    /// and the first failure: after one segment fails, the others stop at their next chunk.
    func run(_ body: (Int, Range<UInt64>, Bool) throws(SFTPError) -> UInt64) -> (moved: UInt64, failure: SFTPError?) {
        parallel(ranges.count) { i throws(SFTPError) in try body(i, ranges[i], isLast(i)) }
    }

    /// Runs body(group, segments) for each of `groups` groups in parallel (a connection each):
    /// group g gets segments g, g + groups, ... in order, which it may move one after another or
    /// at once. Returns the bytes moved and the first failure, as `run` does.
    func run(groups: Int, _ body: (Int, [Int]) throws(SFTPError) -> UInt64) -> (moved: UInt64, failure: SFTPError?) {
        let count = ranges.count, groups = max(groups, 1)
        // Groups past the segments' count would have nothing to move.
        return parallel(min(groups, count)) { g throws(SFTPError) in try body(g, Array(stride(from: g, to: count, by: groups))) }
    }

    private func parallel(_ iterations: Int, _ body: (Int) throws(SFTPError) -> UInt64) -> (moved: UInt64, failure: SFTPError?) {
        // Each iteration touches only its own slot of `results` and, through body, only its own
        // connection (iteration i uses connection i): nothing is shared between them but this
        // object's lock, so handing them across threads is safe though the types are not Sendable.
        nonisolated(unsafe) let results = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: iterations)
        results.initialize(repeating: 0)
        defer { results.deallocate() }
        nonisolated(unsafe) let body = body
        DispatchQueue.concurrentPerform(iterations: iterations) { i in
            do throws(SFTPError) {
                results[i] = try body(i)
            } catch {
                lock.withLock { if failure == nil { failure = error } }
            }
        }
        return (results.reduce(0, Pacing.saturatingAdd), lock.withLock { failure })
    }

    /// Whether segment i is the file's last (it reads to the end of the file).
    func isLast(_ i: Int) -> Bool { i == ranges.count - 1 }

    /// Throws when the user or the host stopped the transfer, or another segment failed.
    func check(_ display: String) throws(SFTPError) {
        try control.check(display)
        if lock.withLock({ failure != nil }) { throw SFTPError(.stopped, "sftp: \(display.shown): stopped with a failed segment") }
    }

    /// Counts bytes a segment moved (by its start), reports them and paces the whole transfer.
    func moved(_ n: Int, from start: UInt64, observer: TransferObserver, display: String) {
        counted(n, from: start, observer: observer, display: display)
        pace(n)
    }

    /// Counts and reports bytes a segment moved, from any thread (a download's writer).
    func counted(_ n: Int, from start: UInt64, observer: TransferObserver, display: String) {
        lock.withLock {
            if let i = ranges.firstIndex(where: { $0.lowerBound == start }) { done[i] = Pacing.saturatingAdd(done[i], UInt64(max(n, 0))) }
        }
        observer.progressed(display, bytes: n)
    }

    /// Holds the calling segment to the transfer's rate limit, if any.
    func pace(_ n: Int) { control.pace(n) }

    /// The end of the bytes moved without a gap from the start.
    var prefixEnd: UInt64 {
        lock.withLock {
            // upperBound - lowerBound, not r.count: a Range<UInt64>'s count is an Int, and a
            // server that claims a 2^63-byte file makes it trap (a full disk then ended termhost).
            for (i, r) in ranges.enumerated() where done[i] < r.upperBound - r.lowerBound { return r.lowerBound + done[i] }
            return ranges.last!.upperBound
        }
    }
}
