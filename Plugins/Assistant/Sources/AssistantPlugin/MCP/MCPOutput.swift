import Glibc
import Synchronization

/// Standard output of `termhost mcp`: JSON-RPC lines only, one writer at a time, so a tool
/// call's answer and another's progress never interleave inside a line. Once a write fails (the
/// client closed its end: EPIPE, with SIGPIPE ignored by the command) every later write is a
/// no-op; the read side notices the end on its own.
///
/// Threading: [any-thread].
final class MCPOutput: Sendable {
    private let fd: Int32
    private let failed = Mutex(false)

    init(fd: Int32) { self.fd = fd }

    func send(_ line: String) {
        failed.withLock { failed in
            guard !failed else { return }
            var bytes = Array((line + "\n").utf8)[...]
            while !bytes.isEmpty {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    failed = true
                    return
                }
                bytes = bytes.dropFirst(n)
            }
        }
    }
}
