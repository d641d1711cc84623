import CLibSSH2
import Glibc

/// One segment of a local file going out on one SFTP channel, through a sliding window: each
/// write call is given every unacknowledged byte plus fresh ones up to the window, so the
/// pipeline never drains between chunks. libssh2 returns once the first request is
/// acknowledged (or, without blocking, as soon as it can go no further); the unacknowledged
/// rest is passed again unchanged (its contract), from an UploadRing, or where the kernel
/// refuses one, from a plain buffer that moves it to its front when past the middle. Requests
/// are as large as the server allows (WriteRequests).
///
/// `step` does one read and one write call and says whether bytes moved, so one thread can
/// drive several streams on several channels of one session (UploadLanes) as well as one in
/// blocking mode (Upload.send). Runs on the session's executor, like RemoteFS.
final class UploadStream {
    enum Step: Equatable {
        /// The server acknowledged this many bytes.
        case moved(Int)
        /// libssh2 took nothing: its channel window is full, or (without blocking) no
        /// acknowledgement has come yet.
        case blocked
        /// Every byte of the segment is acknowledged.
        case finished
    }

    let fs: RemoteFS
    let handle: OpaquePointer
    /// Where the segment starts in the file (Segments counts by it).
    private(set) var start: UInt64
    private let fd: Int32
    private let localPath: String
    private let partialPath: String
    private var limit: UInt64
    private let window: Int
    private let ring: UploadRing?
    private let plain: UnsafeMutableRawPointer?
    private let capacity: Int
    /// Unacknowledged bytes are [head..<tail] of the stream (ring) or of the plain buffer.
    private var head = 0, tail = 0
    private var readOffset: UInt64
    private var eof = false
    /// Bytes the server acknowledged, over every segment this stream moved.
    private(set) var acknowledged: UInt64 = 0

    /// The last segment (`isLast`) reads to the end of the file, so a file that grew shows up
    /// as more bytes; the others stop at their range's end. `request` is the size of the
    /// channel's write requests.
    /// `handle` is at the range's start.
    init(fs: RemoteFS, handle: OpaquePointer, fd: Int32, range: Range<UInt64>, isLast: Bool,
         request: Int, localPath: String, partialPath: String) {
        self.fs = fs
        self.handle = handle
        self.fd = fd
        self.start = range.lowerBound
        self.localPath = localPath
        self.partialPath = partialPath
        limit = isLast ? UInt64.max : range.upperBound
        readOffset = range.lowerBound
        window = TransferBuffer.writeWindow(request: request)
        ring = UploadRing(minimumSize: window)
        capacity = ring == nil ? 2 * window : Int.max
        plain = ring == nil ? UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16) : nil
    }

    deinit { plain?.deallocate() }

    /// Moves another segment through the same handle and buffer, once every byte of the last
    /// one is acknowledged (the handle's offset is only moved when nothing is in flight).
    func restart(at range: Range<UInt64>, isLast: Bool) {
        assert(head == tail, "a segment restarted with bytes in flight")
        start = range.lowerBound
        limit = isLast ? UInt64.max : range.upperBound
        readOffset = range.lowerBound
        eof = false
        head = 0
        tail = 0
        libssh2_sftp_seek64(handle, range.lowerBound)
    }

    private func at(_ i: Int) -> UnsafeMutableRawPointer { ring?.at(UInt64(i)) ?? plain! + i }

    /// Bytes passed to libssh2 and not acknowledged yet.
    var unacknowledged: Int { tail - head }

    /// The same write call again with the same bytes and nothing read: what finishes a packet
    /// a call left half sent (UploadLanes.settle). Returns what libssh2 returned (bytes
    /// acknowledged, 0, or an error code), the acknowledged bytes counted.
    func resend() -> Int {
        guard head < tail else { return 0 }
        let n = libssh2_sftp_write(handle, at(head).assumingMemoryBound(to: CChar.self), tail - head)
        if n > 0 {
            head += n
            acknowledged += UInt64(n)
        }
        return n
    }

    func step() throws(SFTPError) -> Step {
        let room = min(window - (tail - head), capacity - tail, Int(clamping: limit - readOffset))
        if !eof && room == 0 && readOffset >= limit { eof = true }
        if !eof, room > 0 {
            var n: Int
            repeat { n = pread(fd, at(tail), room, off_t(readOffset)) } while n < 0 && errno == EINTR
            guard n >= 0 else { throw SFTPError.local(localPath, "cannot read") }
            if n == 0 { eof = true }
            tail += n
            readOffset += UInt64(n)
        }
        if head == tail { return eof ? .finished : .moved(0) }
        let n = libssh2_sftp_write(handle, at(head).assumingMemoryBound(to: CChar.self), tail - head)
        // 0 in blocking mode (WriteStall), EAGAIN without: the same bytes go again.
        if n == 0 || n == Int(LIBSSH2_ERROR_EAGAIN) { return .blocked }
        guard n > 0 else { throw fs.error(partialPath, "cannot write") }
        head += n
        acknowledged += UInt64(n)
        if let plain, head >= capacity / 2 {
            plain.copyMemory(from: plain + head, byteCount: tail - head)
            tail -= head
            head = 0
        }
        return .moved(n)
    }
}
