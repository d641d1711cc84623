import Foundation

/// Waiting in tests: for a condition (polled against a deadline), or, where a test must show
/// that something does NOT happen, through an observation window named as such.
public enum Wait {
    /// Polls `condition` every `poll` seconds until it holds or `timeout` seconds pass; true
    /// when it held. The deadline only bounds a failing test: the whole suite runs on two cores
    /// in parallel, where things take many times longer than alone, so it is generous.
    @discardableResult
    public static func until(timeout: Double = 60, poll: Double = 0.02, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return true }
            usleep(useconds_t(poll * 1_000_000))
        }
        return try condition()
    }

    /// Lets `seconds` pass, for a test that asserts something did not happen (or measures
    /// something) within that window. The caller says in a comment which product timer the
    /// window is measured against: it must be as short as that timer allows.
    public static func observe(for seconds: Double) {
        usleep(useconds_t(seconds * 1_000_000))
    }
}
