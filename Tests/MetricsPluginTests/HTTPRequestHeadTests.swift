@testable import MetricsCore
import Testing

/// The `metrics serve` request parser: what is answered, and with which status.
@Suite struct HTTPRequestHeadTests {
    func parse(_ s: String) -> HTTPRequestHead.Outcome { HTTPRequestHead.parse(Array(s.utf8)) }

    @Test func aScrapeIsARequest() {
        #expect(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n") == .request(.get, target: "/metrics"))
        #expect(parse("HEAD /metrics?x=1 HTTP/1.0\n\n") == .request(.head, target: "/metrics?x=1"))
        #expect(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n") == .incomplete)
    }

    @Test func otherMethodsAre405AndMalformedLines400() {
        #expect(parse("POST /metrics HTTP/1.1\r\n\r\n") == .refused(status: 405, reason: "Method Not Allowed", body: "only GET and HEAD\n"))
        for bad in ["GET /metrics\r\n\r\n", "GET  /metrics HTTP/1.1\r\n\r\n", "get /metrics HTTP/1.1\r\n\r\n",
                    "GET /met\u{1b}rics HTTP/1.1\r\n\r\n", "GET /metrics HTTP/2.0\r\n\r\n", "\r\n\r\n"] {
            guard case .refused(400, _, _) = parse(bad) else { Issue.record("\(bad.debugDescription): \(parse(bad))"); continue }
        }
    }

    @Test func aHeadLargerThan8KiBIs431() {
        let big = "GET /metrics HTTP/1.1\r\nX-Pad: " + String(repeating: "a", count: 9000)
        #expect(parse(big) == .refused(status: 431, reason: "Request Header Fields Too Large",
                                       body: "the request head is larger than 8192 bytes\n"))
        #expect(parse(big + "\r\n\r\n") == parse(big))
    }
}
