import Foundation
import Glibc

/// Plain HTTP/1.1 over loopback, without curl: what a Prometheus scrape sends, and raw requests.
public enum HTTP {
    /// GET url; the status and the body, nil when nothing answers with HTTP.
    public static func get(_ url: String) -> (status: Int, body: String)? {
        guard let rest = url.split(separator: "//").last, let slash = rest.firstIndex(of: "/"),
              let colon = rest[..<slash].lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)..<slash]),
              let text = exchange(port, "GET \(rest[slash...]) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n\r\n", timeout: 5)
        else { return nil }
        guard let end = text.range(of: "\r\n\r\n"), let status = Int(text.split(separator: " ").dropFirst().first ?? "") else { return nil }
        return (status, String(text[end.upperBound...]))
    }

    /// Sends `request` as it is and returns everything the server answers before it closes (or
    /// goes `timeout` seconds without a byte); nil when nothing listens on `port`.
    public static func exchange(_ port: Int, _ request: String, timeout seconds: Int = 10) -> String? {
        guard let fd = LoopbackListener.connect(to: port) else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var data = [UInt8]()
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buf, buf.count, 0)
            if n <= 0 { break }
            data += buf[0..<n]
        }
        return String(decoding: data, as: UTF8.self)
    }
}
