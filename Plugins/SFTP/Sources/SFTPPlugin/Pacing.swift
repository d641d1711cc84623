/// The arithmetic of the bandwidth limit (`-l`, and the files service's bytes_per_second),
/// kept apart so it can be checked with any numbers.
///
/// Why it saturates: the bytes sent so far, times a billion nanoseconds, pass 2^64 after about
/// 17 GiB, and Swift traps on overflow: a limited download of 18 GB used to end termhost with
/// SIGILL. The product is taken at full width (128 bits) and the quotient, should it not fit,
/// is the farthest time there is, which only ever means "wait" (and each wait is at most 1 s).
///
/// This file uses nothing but the standard library, so the fuzz target compiles it as it is.
enum Pacing {
    /// `-l` in kbit/s: OpenSSH's sftp takes 1 to 100 * 1024 * 1024.
    static let kbitBounds = 1...104_857_600
    /// The most bytes per second a limit can be (the largest -l).
    static let maxBytesPerSecond = UInt64(kbitBounds.upperBound) * 1024 / 8

    /// When (in nanoseconds of the monotonic clock) `sent` bytes are due, started at `start`
    /// and sent at `bytesPerSecond` (> 0): start + sent * 1e9 / bytesPerSecond, saturated.
    static func due(start: UInt64, sent: UInt64, bytesPerSecond: UInt64) -> UInt64 {
        guard bytesPerSecond > 0 else { return start }
        let wide = sent.multipliedFullWidth(by: 1_000_000_000)
        // The quotient fits when the high half is below the divisor.
        let elapsed: UInt64 = wide.high >= bytesPerSecond
            ? .max : bytesPerSecond.dividingFullWidth((wide.high, wide.low)).quotient
        return saturatingAdd(start, elapsed)
    }

    /// How long to sleep, in nanoseconds, when `sent` bytes are due at `due` and it is `now`.
    static func wait(due: UInt64, now: UInt64) -> UInt64 { due > now ? due - now : 0 }

    static func saturatingAdd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    static func saturatingMultiply(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (product, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? .max : product
    }
}
