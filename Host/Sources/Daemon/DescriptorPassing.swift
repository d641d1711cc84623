import Glibc

/// Open descriptors sent along a Unix socket (SCM_RIGHTS): how a client hands the daemon its
/// stdin, stdout and stderr, so a command run in the daemon reads and writes the client's own
/// terminal or pipes (tmux's client does the same). The receiver gets new descriptors for the
/// same open files, close-on-exec; the sender keeps its own.
///
/// Swift has no CMSG_* macros, so the control message is laid out here: a `cmsghdr`, then the
/// descriptors, each part aligned to `size_t` as glibc's CMSG_ALIGN does.
enum DescriptorPassing {
    /// The most descriptors one message may carry; more are refused by the sender and closed
    /// by the receiver.
    static let maxDescriptors = 8

    private static func align(_ n: Int) -> Int { (n + MemoryLayout<Int>.size - 1) & ~(MemoryLayout<Int>.size - 1) }
    private static var headerSize: Int { align(MemoryLayout<cmsghdr>.size) }
    private static func space(_ count: Int) -> Int { headerSize + align(count * MemoryLayout<Int32>.size) }

    /// Sends `bytes` with `descriptors` attached to their first byte; the rest of `bytes`, if
    /// the kernel took only part, goes as plain data. False when the peer is gone or too slow.
    static func send(_ socket: Int32, _ bytes: [UInt8], descriptors: [Int32]) -> Bool {
        precondition(!bytes.isEmpty && (1...maxDescriptors).contains(descriptors.count))
        var control = [UInt8](repeating: 0, count: space(descriptors.count))
        control.withUnsafeMutableBytes { raw in
            let header = raw.baseAddress!.assumingMemoryBound(to: cmsghdr.self)
            header.pointee.cmsg_len = headerSize + descriptors.count * MemoryLayout<Int32>.size
            header.pointee.cmsg_level = SOL_SOCKET
            header.pointee.cmsg_type = Int32(SCM_RIGHTS)
            for (i, fd) in descriptors.enumerated() {
                raw.storeBytes(of: fd, toByteOffset: headerSize + i * MemoryLayout<Int32>.size, as: Int32.self)
            }
        }
        var sent = 0
        let ok = bytes.withUnsafeBytes { data -> Bool in
            control.withUnsafeMutableBytes { controlBytes -> Bool in
                var iov = iovec(iov_base: UnsafeMutableRawPointer(mutating: data.baseAddress), iov_len: data.count)
                return withUnsafeMutablePointer(to: &iov) { iovPointer -> Bool in
                    var message = msghdr()
                    message.msg_iov = iovPointer
                    message.msg_iovlen = 1
                    message.msg_control = controlBytes.baseAddress
                    message.msg_controllen = controlBytes.count
                    var n: Int
                    repeat { n = sendmsg(socket, &message, Int32(MSG_NOSIGNAL)) } while n < 0 && errno == EINTR
                    sent = n
                    return n > 0
                }
            }
        }
        guard ok else { return false }
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    /// Reads like read(2) into `buffer`, and returns the descriptors that came with these
    /// bytes (close-on-exec; the caller owns them).
    static func receive(_ socket: Int32, into buffer: UnsafeMutableRawBufferPointer) -> (count: Int, descriptors: [Int32]) {
        var control = [UInt8](repeating: 0, count: space(maxDescriptors))
        return control.withUnsafeMutableBytes { controlBytes in
            var iov = iovec(iov_base: buffer.baseAddress, iov_len: buffer.count)
            return withUnsafeMutablePointer(to: &iov) { iovPointer in
                var message = msghdr()
                message.msg_iov = iovPointer
                message.msg_iovlen = 1
                message.msg_control = controlBytes.baseAddress
                message.msg_controllen = controlBytes.count
                let n = recvmsg(socket, &message, Int32(MSG_CMSG_CLOEXEC))
                guard n >= 0 else { return (n, []) }
                var descriptors: [Int32] = []
                // Walk every control message; only SCM_RIGHTS carries descriptors.
                var offset = 0
                while offset + headerSize <= message.msg_controllen {
                    let header = (controlBytes.baseAddress! + offset).assumingMemoryBound(to: cmsghdr.self).pointee
                    guard header.cmsg_len >= headerSize, offset + header.cmsg_len <= message.msg_controllen else { break }
                    if header.cmsg_level == SOL_SOCKET && header.cmsg_type == Int32(SCM_RIGHTS) {
                        let count = (header.cmsg_len - headerSize) / MemoryLayout<Int32>.size
                        for i in 0..<count {
                            descriptors.append(controlBytes.load(fromByteOffset: offset + headerSize + i * MemoryLayout<Int32>.size, as: Int32.self))
                        }
                    }
                    offset += align(header.cmsg_len)
                }
                return (n, descriptors)
            }
        }
    }
}
