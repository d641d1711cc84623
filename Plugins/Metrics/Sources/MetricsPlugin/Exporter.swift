import Foundation
import Glibc
import MetricsCore

/// `metrics serve`: a minimal HTTP/1.1 server answering GET /metrics with the Prometheus text
/// format, for an existing Prometheus to scrape. One request per connection, served on the
/// command's thread between store syncs; anything else gets 404 (or 405 for other methods).
struct Exporter {
    let command: MetricsCommand
    let monitors: MonitorStore

    func run(_ args: [String]) throws -> Int32 {
        var listen = "127.0.0.1:9464"
        var hosts: [String] = []
        var rest = args[...]
        while let a = rest.popFirst() {
            if a == "--listen" {
                guard let v = rest.popFirst() else { return command.usageError("termhost metrics serve: --listen needs ADDRESS:PORT") }
                listen = v
            } else { hosts.append(a) }
        }
        guard let colon = listen.lastIndex(of: ":"), let port = UInt16(listen[listen.index(after: colon)...]) else {
            return command.usageError("termhost metrics serve: --listen takes ADDRESS:PORT, e.g. 127.0.0.1:9464")
        }
        let address = String(listen[..<colon])
        guard let transport = command.transport() else { return 1 }
        let fd: Int32
        let bound: UInt16
        switch Exporter.listen(address, port) {
        case .failure(let e): command.invocation.printError("termhost metrics serve: cannot listen on \(listen): \(e.message)"); return 1
        case .success(let v): (fd, bound) = v
        }
        defer { close(fd) }
        let set = MonitorSet(explicit: hosts, monitors: monitors, transport: transport, scene: 0, details: false)
        set.sync(force: true)
        defer { set.release() }
        command.invocation.print("Serving Prometheus metrics on http://\(address):\(bound)/metrics")
        while true {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&pfd, 1, 1000) > 0 {
                let client = accept(fd, nil, nil)
                if client >= 0 { serve(client, set) }
            }
            set.sync()
        }
    }

    struct ListenError: Error { let message: String }

    static func listen(_ address: String, _ port: UInt16) -> Result<(Int32, UInt16), ListenError> {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(ListenError(message: String(cString: strerror(errno)))) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        guard inet_pton(AF_INET, address == "localhost" ? "127.0.0.1" : address, &addr.sin_addr) == 1 else {
            close(fd)
            return .failure(ListenError(message: "'\(address)' is not an IPv4 address"))
        }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && Glibc.listen(fd, 16) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { let e = String(cString: strerror(errno)); close(fd); return .failure(ListenError(message: e)) }
        return .success((fd, UInt16(bigEndian: addr.sin_port)))
    }

    /// The whole exchange with one client (reading the request head, writing the answer) gets
    /// this long, however the client trickles bytes: requests are served one at a time, so a
    /// slow or stuck client must not hold the others (or the store syncs) for longer.
    static let requestSeconds = 3.0

    /// Waits until fd is ready for events or the deadline passes.
    private static func ready(_ fd: Int32, _ events: Int32, by deadline: Date) -> Bool {
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            var pfd = pollfd(fd: fd, events: Int16(events), revents: 0)
            let r = poll(&pfd, 1, Int32(min(1000, max(1, (left * 1000).rounded(.up)))))
            if r > 0 { return true }
            if r < 0 && errno != EINTR { return false }
        }
    }

    /// Reads the request head (bounded: 16 KiB), answers, closes; all within requestSeconds.
    private func serve(_ client: Int32, _ set: MonitorSet) {
        defer { close(client) }
        let deadline = Date().addingTimeInterval(Exporter.requestSeconds)
        _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
        var head: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        var complete = false
        while head.count < 16384, Exporter.ready(client, Int32(POLLIN), by: deadline) {
            let n = recv(client, &buf, buf.count, 0)
            if n < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            if n <= 0 { break }
            head += buf[0..<n]
            if head.count >= 4, String(decoding: head, as: UTF8.self).contains("\r\n\r\n") { complete = true; break }
        }
        // Out of time before the request arrived: nothing to answer.
        guard complete || deadline.timeIntervalSinceNow > 0 else { return }
        let firstLine = String(decoding: head, as: UTF8.self).split(separator: "\r\n").first.map(String.init) ?? ""
        let parts = firstLine.split(separator: " ")
        let (status, body, type): (String, String, String)
        if parts.count >= 2, parts[0] != "GET" && parts[0] != "HEAD" {
            (status, body, type) = ("405 Method Not Allowed", "only GET\n", "text/plain")
        } else if parts.count >= 2, parts[1] == "/metrics" || parts[1].hasPrefix("/metrics?") {
            set.sync()
            (status, body, type) = ("200 OK", Prometheus.render(set.reports, now: Date().timeIntervalSince1970), Prometheus.contentType)
        } else {
            (status, body, type) = ("404 Not Found", "try /metrics\n", "text/plain")
        }
        let bytes = Array(body.utf8)
        let response = "HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
        var out = Array(response.utf8)
        if parts.first != "HEAD" { out += bytes }
        var sent = 0
        while sent < out.count, Exporter.ready(client, Int32(POLLOUT), by: deadline) {
            let n = out[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            if n <= 0 { break }
            sent += n
        }
    }
}
