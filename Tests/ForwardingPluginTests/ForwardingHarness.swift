import Foundation
import Glibc
import TestSupport

extension SSHHarness {
    /// The SSH harness (scratch home, trusted key, real sshd) with the forwarding plugin beside
    /// the SSH plugin.
    static func forwarding(dir: TemporaryDirectory, serverConfig: String = "") throws -> SSHHarness {
        let h = try SSHHarness(dir: dir, serverConfig: serverConfig)
        _ = try Fixtures.bundle("libForwardingPlugin.so", as: "org.termhost.forwarding", in: h.plugins)
        return h
    }

    /// `termhost forward run ARGS...` in the background.
    func run(_ args: [String]) throws -> ForwardRun {
        try ForwardRun(Paths.termhost, ["forward", "run"] + args, environment: environment)
    }

    /// `termhost forward run ARGS...` with at most `nofile` open descriptors (prlimit, which
    /// execs it: the process ID is termhost's) and extra environment.
    func run(_ args: [String], nofile: Int? = nil, environment extra: [String: String]) throws -> ForwardRun {
        var env = environment
        for (k, v) in extra { env[k] = v }
        guard let nofile else { return try ForwardRun(Paths.termhost, ["forward", "run"] + args, environment: env) }
        return try ForwardRun("/usr/bin/prlimit", ["--nofile=\(nofile)", Paths.termhost, "forward", "run"] + args, environment: env)
    }

    /// Removes every authorized key: the next log-in is refused.
    func revokeKey() {
        _ = FileManager.default.createFile(atPath: server.directory + "/authorized_keys", contents: Data())
    }
}

/// A running `termhost forward run`, its output collected as it comes.
final class ForwardRun: @unchecked Sendable {
    let process: Process
    private let lock = NSLock()
    private var text = ""
    private let done = DispatchSemaphore(value: 0)

    init(_ executable: String, _ args: [String], environment: [String: String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = args
        process.environment = environment
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let handle = out.fileHandleForReading
        Thread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.lock()
                text += String(decoding: chunk, as: UTF8.self)
                lock.unlock()
            }
            done.signal()
        }.start()
    }

    var output: String {
        lock.lock()
        defer { lock.unlock() }
        return text
    }

    /// Waits until a line contains `fragment`; returns that line, or nil after `timeout` s.
    @discardableResult
    func waitForLine(containing fragment: String, timeout: Double = 60) -> String? {
        var line: String?
        Wait.until(timeout: timeout) {
            line = output.split(separator: "\n").first { $0.contains(fragment) }.map(String.init)
            return line != nil
        }
        return line
    }

    /// Waits until fragment occurs count times.
    func waitForCount(of fragment: String, _ count: Int, timeout: Double = 60) -> Bool {
        Wait.until(timeout: timeout) { output.components(separatedBy: fragment).count - 1 >= count }
    }

    /// The port at the end of the first line containing fragment ("... listening on 127.0.0.1:4711").
    func port(_ fragment: String, timeout: Double = 60) -> Int? {
        guard let line = waitForLine(containing: fragment, timeout: timeout) else { return nil }
        return line.split(separator: ":").last.flatMap { Int($0) }
    }

    /// Sends SIGINT (as Ctrl-C) and waits for the exit; returns the status and the seconds it took.
    func interrupt() -> (status: Int32, seconds: Double) {
        let start = Date()
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        _ = done.wait(timeout: .now() + 5)
        return (process.terminationStatus, Date().timeIntervalSince(start))
    }

    /// Waits for the process to exit on its own; nil on timeout (then kills it).
    func waitForExit(timeout: Double = 60) -> Int32? {
        Wait.until(timeout: timeout) { !process.isRunning }
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit(); return nil }
        _ = done.wait(timeout: .now() + 5)
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }
}

/// A TCP server on 127.0.0.1 that runs `serve` on a thread of its own for each connection it
/// accepts (and closes the connection after).
class LoopbackServer: @unchecked Sendable {
    let listener = LoopbackListener()
    var port: Int { listener.port }

    init(_ serve: @escaping @Sendable (Int32) -> Void) {
        // A descriptor of the thread's own: after stop() closes the listener's number, another
        // test may get that number, and an accept() on it would take that test's connection.
        let fd = dup(listener.fd)
        Thread {
            defer { close(fd) }
            while true {
                let c = accept(fd, nil, nil)
                if c < 0 && errno == EINTR { continue }
                if c < 0 { return }
                Thread {
                    serve(c)
                    close(c)
                }.start()
            }
        }.start()
    }

    func stop() { shutdown(listener.fd, Int32(SHUT_RDWR)); listener.close() }
}

/// Echoes until end-of-file, then shuts down its writing side, so a half-closed client still
/// gets every byte back.
final class EchoServer: LoopbackServer, @unchecked Sendable {
    init() {
        super.init { c in
            var buf = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = read(c, &buf, buf.count)
                if n <= 0 { break }
                var off = 0
                while off < n {
                    let w = buf[off..<n].withUnsafeBytes { send(c, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if w <= 0 { break }
                    off += w
                }
            }
            shutdown(c, Int32(SHUT_WR))
        }
    }
}

/// Answers every HTTP request with 200 and one body (what curl fetches through a SOCKS proxy):
/// reads the request head, answers, and closes.
final class HTTPFileServer: LoopbackServer, @unchecked Sendable {
    init(body: String) {
        super.init { c in
            var head = [UInt8]()
            var buf = [UInt8](repeating: 0, count: 4096)
            while !head.suffix(4).elementsEqual("\r\n\r\n".utf8) {
                let n = read(c, &buf, buf.count)
                if n <= 0 { return }
                head += buf[0..<n]
            }
            let answer = Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)".utf8)
            _ = answer.withUnsafeBytes { send(c, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }
}

/// Reads a connection to end-of-file, then answers 16 bytes: the byte count and a
/// position-sensitive checksum (`Net.checksum`) of what it read.
final class SinkServer: LoopbackServer, @unchecked Sendable {
    init() {
        super.init { c in
            var sum = Net.Checksum()
            let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 8)
            defer { buf.deallocate() }
            while true {
                let n = read(c, buf.baseAddress, buf.count)
                if n <= 0 { break }
                sum.add(UnsafeRawBufferPointer(rebasing: buf[0..<n]))
            }
            var answer = [sum.count.bigEndian, sum.value.bigEndian]
            _ = send(c, &answer, 16, Int32(MSG_NOSIGNAL))
        }
    }
}

enum Net {
    /// Adler-style: a running sum and a sum of running sums, so order matters.
    struct Checksum: Equatable {
        var count: UInt64 = 0
        var s1: UInt64 = 1
        var s2: UInt64 = 0
        var value: UInt64 { s2 << 32 ^ s1 }
        mutating func add(_ bytes: UnsafeRawBufferPointer) {
            for b in bytes { s1 = s1 &+ UInt64(b); s2 = s2 &+ s1 }
            count += UInt64(bytes.count)
        }
    }

    /// Sends data to a SinkServer through port and returns its answer (count, checksum).
    static func sink(port: Int, _ data: UnsafeRawBufferPointer) -> (UInt64, UInt64)? {
        guard let fd = LoopbackListener.connect(to: port) else { return nil }
        defer { close(fd) }
        var tv = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var off = 0
        while off < data.count {
            let w = send(fd, data.baseAddress! + off, data.count - off, Int32(MSG_NOSIGNAL))
            if w <= 0 { return nil }
            off += w
        }
        shutdown(fd, Int32(SHUT_WR))
        var answer: [UInt64] = [0, 0]
        guard recv(fd, &answer, 16, Int32(MSG_WAITALL)) == 16 else { return nil }
        return (UInt64(bigEndian: answer[0]), UInt64(bigEndian: answer[1]))
    }

    /// Sends data, half-closes, and reads until end-of-file; nil when it cannot connect.
    static func roundTrip(port: Int, _ data: [UInt8]) -> [UInt8]? {
        guard let fd = LoopbackListener.connect(to: port) else { return nil }
        defer { close(fd) }
        return roundTrip(fd, data)
    }

    /// Runs body(0..<count) each on a thread of its own, all at once, and waits for them all.
    /// (DispatchQueue.concurrentPerform would run about one per core at a time.)
    static func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for i in 0..<count {
            group.enter()
            Thread.detachNewThread { body(i); group.leave() }
        }
        group.wait()
    }

    /// roundTrip on a stream already connected (which stays open for the caller to close).
    static func roundTrip(_ fd: Int32, _ data: [UInt8]) -> [UInt8] {
        var tv = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        // Write and read at once, so a large payload cannot deadlock on full buffers.
        let written = DispatchSemaphore(value: 0)
        let writer = Thread {
            var off = 0
            while off < data.count {
                let w = data[off...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if w <= 0 { break }
                off += w
            }
            shutdown(fd, Int32(SHUT_WR))
            written.signal()
        }
        writer.start()
        var received: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buf, buf.count)
            if n <= 0 { break }
            received += buf[0..<n]
        }
        // The caller may close fd next: never while the writer still uses it.
        written.wait()
        return received
    }

    /// Starts a TCP connection without waiting for it (fills a listener's backlog).
    static func connectNonBlocking(port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return fd
    }

    /// Writes data on a connected stream and reads the same number of bytes back; true when
    /// they match (5 s receive timeout).
    static func echo(_ fd: Int32, _ data: [UInt8]) -> Bool {
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var off = 0
        while off < data.count {
            let w = data[off...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if w <= 0 { return false }
            off += w
        }
        var back = [UInt8](repeating: 0, count: data.count)
        return recv(fd, &back, back.count, Int32(MSG_WAITALL)) == data.count && back == data
    }

    /// Random bytes from the kernel: a byte-at-a-time generator takes seconds for megabytes in
    /// a debug build, time a test's own measurements would include.
    static func random(_ count: Int) -> [UInt8] {
        let urandom = FileHandle(forReadingAtPath: "/dev/urandom")!
        defer { try? urandom.close() }
        return [UInt8](urandom.readData(ofLength: count))
    }
}
