import Foundation
import Glibc

/// A plain HTTP/1.1 GET over loopback (what a Prometheus scrape sends), without curl.
public enum HTTP {
    public static func get(_ url: String) -> (status: Int, body: String)? {
        guard let rest = url.split(separator: "//").last, let slash = rest.firstIndex(of: "/"),
              let colon = rest[..<slash].lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)..<slash]),
              let fd = LoopbackListener.connect(to: port) else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array("GET \(rest[slash...]) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else { return nil }
        var data = [UInt8]()
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buf, buf.count, 0)
            if n <= 0 { break }
            data += buf[0..<n]
        }
        let text = String(decoding: data, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n"), let status = Int(text.split(separator: " ").dropFirst().first ?? "") else { return nil }
        return (status, String(text[end.upperBound...]))
    }
}
