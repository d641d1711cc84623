/// How a provider makes its requests. The defaults are the product's; tests shorten the retry
/// delays.
public struct ProviderOptions: Sendable {
    public var timeouts: HTTPTimeouts
    public var retry: RetrySchedule
    /// A response (streamed or not) larger than this is refused as `.tooLarge`.
    public var maxResponseBytes: Int
    /// Called once per attempt when the response's first body byte arrives, with the time on
    /// `ContinuousClock`: the start of the "provider's first byte to the terminal's first byte"
    /// measurement (Benchmarks).
    public var onFirstByte: (@Sendable (ContinuousClock.Instant) -> Void)?

    public init(timeouts: HTTPTimeouts = HTTPTimeouts(), retry: RetrySchedule = .standard,
                maxResponseBytes: Int = 16 << 20, onFirstByte: (@Sendable (ContinuousClock.Instant) -> Void)? = nil) {
        self.timeouts = timeouts
        self.retry = retry
        self.maxResponseBytes = maxResponseBytes
        self.onFirstByte = onFirstByte
    }
}
