/// The request head a client of `metrics serve` sends, parsed from raw bytes (no sockets, no
/// Foundation: the fuzz target Tests/Fuzz/MetricsHTTPFuzz.swift compiles this file alone).
///
/// The endpoint serves one thing (GET /metrics), so the parser accepts exactly what that needs
/// and answers everything else with a status: a head larger than `maxHeadBytes` is 431, a
/// request line that is not `METHOD SP TARGET SP HTTP/1.x` is 400, a method other than GET or
/// HEAD is 405. Header fields are not interpreted (none changes the answer); they only count
/// towards the size.
public enum HTTPRequestHead {
    /// Prometheus sends a few hundred bytes; 8 KiB is the usual server default for a head.
    public static let maxHeadBytes = 8 * 1024

    public enum Method: String, Sendable { case get = "GET", head = "HEAD" }

    public enum Outcome: Equatable, Sendable {
        /// More bytes are needed (the blank line has not arrived).
        case incomplete
        case request(Method, target: String)
        /// Refused: the status line's code and reason, and a body saying why.
        case refused(status: Int, reason: String, body: String)
    }

    /// Looks at every byte received so far.
    public static func parse(_ bytes: some Collection<UInt8>) -> Outcome {
        let b = Array(bytes.prefix(maxHeadBytes + 4))
        guard let end = headEnd(b) else {
            if b.count > maxHeadBytes { return tooLarge }
            return .incomplete
        }
        guard end <= maxHeadBytes else { return tooLarge }
        // The request line ends at the first LF (a CR before it is dropped).
        let lineEnd = b.firstIndex(of: 10) ?? end
        var line = b[..<lineEnd]
        if line.last == 13 { line = line.dropLast() }
        let parts = line.split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty,
              parts[0].allSatisfy({ $0 >= 0x41 && $0 <= 0x5a }),
              parts[1].allSatisfy({ $0 > 32 && $0 < 127 }),
              parts[2].elementsEqual("HTTP/1.1".utf8) || parts[2].elementsEqual("HTTP/1.0".utf8) else {
            return .refused(status: 400, reason: "Bad Request", body: "expected a request line such as 'GET /metrics HTTP/1.1'\n")
        }
        guard let method = Method(rawValue: String(decoding: parts[0], as: UTF8.self)) else {
            return .refused(status: 405, reason: "Method Not Allowed", body: "only GET and HEAD\n")
        }
        return .request(method, target: String(decoding: parts[1], as: UTF8.self))
    }

    /// Whether the target asks for the metrics (a query string is allowed and ignored).
    public static func isMetrics(_ target: String) -> Bool {
        target == "/metrics" || target.hasPrefix("/metrics?")
    }

    private static let tooLarge = Outcome.refused(status: 431, reason: "Request Header Fields Too Large",
                                                  body: "the request head is larger than \(maxHeadBytes) bytes\n")

    /// The index just past the blank line that ends the head (CRLFCRLF, or LFLF from a lax client).
    static func headEnd(_ b: [UInt8]) -> Int? {
        var i = 0
        while i < b.count {
            if b[i] == 10 {
                if i + 1 < b.count, b[i + 1] == 10 { return i + 2 }
                if i + 2 < b.count, b[i + 1] == 13, b[i + 2] == 10 { return i + 3 }
            }
            i += 1
        }
        return nil
    }
}
