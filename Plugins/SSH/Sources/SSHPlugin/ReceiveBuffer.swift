import Glibc

/// What libssh2 reads from the socket goes through here, 256 KiB at a time.
///
/// libssh2 1.10 asks its receive callback for at most 16 KiB (its transport buffer), so a bulk
/// download cost one recv() per 16 KiB, and about as many failing with EAGAIN followed by a
/// poll() (strace, 256 MiB: 46,153 recvfrom, 27,764 EAGAIN). One large read serves many of
/// libssh2's small ones.
///
/// Why it is safe with code that polls the socket: libssh2 reports "waiting for inbound data"
/// only after the callback returned EAGAIN, and the callback returns EAGAIN only when this
/// buffer is empty. So a poll() that follows libssh2's EAGAIN never waits on bytes held here.
/// Every libssh2 call on a session runs on one thread (the connection's executor), so this
/// needs no lock.
final class ReceiveBuffer {
    static let capacity = 256 * 1024
    private let storage = UnsafeMutableRawPointer.allocate(byteCount: ReceiveBuffer.capacity, alignment: 64)
    private var start = 0
    private var end = 0

    deinit { storage.deallocate() }

    /// recv() semantics for libssh2: bytes copied, 0 at end of stream, or -errno.
    func receive(_ socket: Int32, into buffer: UnsafeMutableRawPointer, _ length: Int, flags: Int32) -> Int {
        if start == end {
            // A read as large as ours gains nothing from the extra copy.
            if length >= ReceiveBuffer.capacity {
                let n = recv(socket, buffer, length, flags)
                return n < 0 ? -Int(errno) : n
            }
            let n = recv(socket, storage, ReceiveBuffer.capacity, flags)
            if n <= 0 { return n < 0 ? -Int(errno) : 0 }
            start = 0
            end = n
        }
        let n = min(length, end - start)
        buffer.copyMemory(from: storage + start, byteCount: n)
        start += n
        return n
    }
}
