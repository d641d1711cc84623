import Foundation
import Glibc

/// An HTTP/1.1 server on 127.0.0.1 (a kernel-chosen port) that answers each request with the
/// next response of its script, for testing model providers against their real wire formats.
/// Bodies go out chunked (`Transfer-Encoding: chunked`, as providers stream), each scripted write
/// one chunk sent at once (TCP_NODELAY), so the client sees the split the test chose. Every
/// request is recorded with the time it arrived. After the script runs out it answers 500.
public final class ScriptedHTTPServer: @unchecked Sendable {
    /// How a body is cut into writes.
    public enum Writes: Sendable, Equatable {
        case whole
        /// One byte per write: every chunk boundary at once.
        case bytewise
        /// Two writes, split before byte `n`.
        case split(at: Int)
    }

    public struct Response: Sendable {
        public var status: Int
        /// Extra header lines, "Name: value".
        public var headers: [String]
        public var body: [UInt8]
        public var writes: Writes
        /// Seconds between writes.
        public var pause: Double
        /// Close the connection after this many body bytes, without the final chunk.
        public var closeAfter: Int?
        /// Send this many body bytes, then send nothing more until the client goes away.
        public var stallAfter: Int?

        public init(status: Int = 200, headers: [String] = ["Content-Type: text/event-stream"], body: String,
                    writes: Writes = .whole, pause: Double = 0, closeAfter: Int? = nil, stallAfter: Int? = nil) {
            self.status = status
            self.headers = headers
            self.body = Array(body.utf8)
            self.writes = writes
            self.pause = pause
            self.closeAfter = closeAfter
            self.stallAfter = stallAfter
        }
    }

    public struct Request: Sendable {
        public var requestLine: String
        /// Header lines as received ("Name: value").
        public var headers: [String]
        public var body: String
        public var receivedAt: ContinuousClock.Instant

        /// The value of header `name` (case-insensitive), if present.
        public func header(_ name: String) -> String? {
            for line in headers {
                guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == name.lowercased() else { continue }
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            return nil
        }
    }

    private let listener = LoopbackListener()
    private let lock = NSLock()
    private var script: [Response]
    private var received: [Request] = []
    private var stopped = false
    private var responder: (@Sendable (Int, Request) -> Response?)?

    public var port: Int { listener.port }
    public var baseURL: String { "http://127.0.0.1:\(port)/v1" }

    /// The requests received so far, in order.
    public var requests: [Request] { lock.withLock { received } }

    public init(script: [Response]) {
        self.script = script
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Answers from `respond` (given the request's number from 1 and the request) before the
    /// script, for answers that depend on what the client sent; nil falls back to the script.
    public func respond(with respond: @escaping @Sendable (Int, Request) -> Response?) { lock.withLock { responder = respond } }

    /// Appends responses to the script.
    public func enqueue(_ responses: [Response]) { lock.withLock { script += responses } }

    public func stop() {
        lock.withLock { stopped = true }
        shutdown(listener.fd, Int32(SHUT_RDWR))
    }

    deinit { stop() }

    private func acceptLoop() {
        while true {
            let fd = accept(listener.fd, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            if lock.withLock({ stopped }) { close(fd); return }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            Thread { [self] in serve(fd) }.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        guard let request = readRequest(fd) else { return }
        let response: Response = lock.withLock {
            received.append(request)
            if let answer = responder?(received.count, request) { return answer }
            return script.isEmpty ? Response(status: 500, headers: [], body: "script exhausted") : script.removeFirst()
        }
        var head = "HTTP/1.1 \(response.status) Scripted\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n"
        for header in response.headers { head += header + "\r\n" }
        guard send(fd, Array((head + "\r\n").utf8)) else { return }
        var body = response.body
        if let n = response.closeAfter { body = Array(body.prefix(n)) }
        if let n = response.stallAfter { body = Array(body.prefix(n)) }
        let pieces: [ArraySlice<UInt8>] = switch response.writes {
        case .whole: [body[...]]
        case .bytewise: body.indices.map { body[$0...$0] }
        case .split(let at): [body[..<min(at, body.count)], body[min(at, body.count)...]]
        }
        for piece in pieces where !piece.isEmpty {
            guard send(fd, Array(String(piece.count, radix: 16).utf8) + [13, 10] + piece + [13, 10]) else { return }
            if response.pause > 0 { usleep(useconds_t(response.pause * 1_000_000)) }
        }
        if response.closeAfter != nil { return }
        if response.stallAfter != nil {
            // Until the client closes (a read returns 0 or fails), or 60 s.
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            var scratch = [UInt8](repeating: 0, count: 512)
            for _ in 0..<600 where poll(&pfd, 1, 100) >= 0 {
                if pfd.revents != 0, recv(fd, &scratch, scratch.count, 0) <= 0 { return }
            }
            return
        }
        _ = send(fd, Array("0\r\n\r\n".utf8))
    }

    private func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    private func readRequest(_ fd: Int32) -> Request? {
        var data: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 65536)
        func more() -> Bool {
            let n = recv(fd, &scratch, scratch.count, 0)
            if n <= 0 { return false }
            data += scratch[..<n]
            return true
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            guard more() else { return nil }
            headEnd = data.indices.dropLast(3).first { data[$0..<$0 + 4].elementsEqual(separator) }
        }
        let lines = String(decoding: data[..<headEnd!], as: UTF8.self).components(separatedBy: "\r\n")
        var request = Request(requestLine: lines[0], headers: Array(lines.dropFirst()), body: "", receivedAt: .now)
        let length = Int(request.header("Content-Length") ?? "0") ?? 0
        while data.count - (headEnd! + 4) < length {
            guard more() else { return nil }
        }
        request.body = String(decoding: data[(headEnd! + 4)...].prefix(length), as: UTF8.self)
        return request
    }
}
