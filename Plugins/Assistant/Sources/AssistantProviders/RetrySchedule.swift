import Foundation

/// When a failed model request is sent again. A request is retried only when it failed
/// transiently (a connection or stream failure, HTTP 408, 409, 429 other than an exhausted quota,
/// 5xx including Anthropic's 529, or a mid-stream overloaded or server error) and nothing of its
/// response was reported yet: once text or a tool call went to the run engine, a retry would show
/// the text twice or hand over the same tool call again, so the failure is final.
public struct RetrySchedule: Sendable, Equatable {
    /// The wait before each retry, in seconds; its count is the number of retries.
    public var delays: [Double]
    /// A server's `retry-after` raises the wait to its value, up to this many seconds.
    public var retryAfterCap: Double

    public init(delays: [Double], retryAfterCap: Double) {
        self.delays = delays
        self.retryAfterCap = retryAfterCap
    }

    /// Five retries, 1, 2, 4, 8 and 16 s apart; `retry-after` honoured up to 60 s.
    public static let standard = RetrySchedule(delays: [1, 2, 4, 8, 16], retryAfterCap: 60)
    /// One attempt and no retry, for a connection check such as `termhost assistant provider test`.
    public static let none = RetrySchedule(delays: [], retryAfterCap: 0)

    /// The wait before retry number `retry` (0-based), given the server's `retry-after` value.
    func delay(beforeRetry retry: Int, retryAfter: String?, now: Date = Date()) -> Double {
        let floor = retryAfter.flatMap { Self.seconds(fromRetryAfter: $0, now: now) }.map { min($0, retryAfterCap) } ?? 0
        return max(delays[retry], floor)
    }

    /// `retry-after` as delay-seconds or as an HTTP date (RFC 9110 section 10.2.3); nil when it is
    /// neither. A date in the past is 0.
    static func seconds(fromRetryAfter value: String, now: Date) -> Double? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) {
            return Double(text.prefix(9)) ?? 0
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = formatter.date(from: text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// Sleeps `seconds` in slices of 20 ms; false when `isCancelled` turned true first.
    static func wait(_ seconds: Double, isCancelled: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while true {
            if isCancelled() { return false }
            let left = end.timeIntervalSinceNow
            if left <= 0 { return true }
            usleep(useconds_t(min(left, 0.02) * 1_000_000))
        }
    }
}
