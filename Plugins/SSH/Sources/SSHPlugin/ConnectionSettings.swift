import Glibc
import TermhostSDK

/// The SSH feature's numeric settings (policy or user configuration, keys of org.termhost.ssh)
/// and a saved host's keepalive numbers, range-checked before they reach libssh2 or a timer.
///
/// Why: these numbers become a `UInt32` for libssh2, milliseconds for poll() (an `Int32`) and a
/// product (interval x count); out of range, Swift traps and the whole termhost process dies
/// (`connectTimeout: 3000000` did, with SIGILL). Refused with a message naming the setting and
/// its range, as OpenSSH refuses a bad ssh_config value.
enum ConnectionSettings {
    static let feature = "org.termhost.ssh"
    /// ConnectTimeout: at least a second, at most an hour.
    static let connectTimeoutSeconds = 1...3600
    /// ServerAliveInterval: up to a day; 0 turns keepalives off.
    static let keepaliveSeconds = 0...86400
    /// ServerAliveCountMax: unanswered keepalives before giving up.
    static let keepaliveCounts = 1...1000

    /// The connectTimeout setting in seconds (default 15).
    static func connectTimeout(_ host: PluginHost) throws(SSHError) -> Int {
        try number(host, "connectTimeout", in: connectTimeoutSeconds, unit: "seconds") ?? 15
    }

    /// receiveWindowMiB: how much one connection's bulk channels may grow their receive
    /// windows, together (ReceiveWindow); 0 keeps every window at 2 MiB.
    static let receiveWindowMiB = 0...1024

    /// The receiveWindowMiB setting in bytes (default 32 MiB: measured at 50 ms against this
    /// machine's OpenSSH 9.2, 32 moved -L and exec output faster than 15 (HPN-SSH's cap for
    /// OpenSSH 8.9 and later) and no slower than 64; Docs/SSH.md, "Receive windows").
    static func receiveWindow(_ host: PluginHost) throws(SSHError) -> Int {
        (try number(host, "receiveWindowMiB", in: receiveWindowMiB, unit: "MiB") ?? 32) << 20
    }

    /// A whole number setting, nil when not set.
    static func number(_ host: PluginHost, _ key: String, in range: ClosedRange<Int>, unit: String) throws(SSHError) -> Int? {
        guard let text = (try? host.setting(feature: feature, key: key)) ?? nil else { return nil }
        do { return try BoundedNumber.integer(text, name: "\(key) (setting of \(feature))", in: range, unit: unit) }
        catch { throw SSHError("ssh: \(error.description)") }
    }

    /// A saved host's own value, checked again here: it may have been saved before the rules.
    static func saved(_ value: Int?, _ key: String, host: String, in range: ClosedRange<Int>, unit: String) throws(SSHError) -> Int? {
        guard let value else { return nil }
        do { return try BoundedNumber.check(value, name: "\(key) of host '\(VisibleText.of(host))'", in: range, unit: unit) }
        catch { throw SSHError("ssh: \(error.description)") }
    }

    /// interval x count in seconds, saturating (never traps, whatever the inputs).
    static func silenceLimit(interval: Int, count: Int) -> Int {
        let (product, overflow) = interval.multipliedReportingOverflow(by: count)
        return overflow ? Int.max : product
    }

    /// Whether a server silent for `silentMilliseconds` is dead: once interval x count seconds,
    /// and one more, have passed. OpenSSH's ServerAliveInterval x ServerAliveCountMax gives up
    /// at about interval x count (2 x 2: 4.4 s measured); libssh2 sends its probes on whole
    /// seconds, up to a second after they are due, so a live server's answer can come that much
    /// later: the second keeps a slow but live server from being declared dead. Measured in
    /// milliseconds (counted in whole seconds, the check used to fire up to two seconds late).
    static func silentTooLong(_ silentMilliseconds: UInt64, interval: Int, count: Int) -> Bool {
        let limit = silenceLimit(interval: interval, count: count)
        let (ms, overflow) = UInt64(max(limit, 0)).multipliedReportingOverflow(by: 1000)
        return !overflow && silentMilliseconds >= ms + probeGraceMilliseconds
    }

    /// How late libssh2 may send a due probe (its clock is in whole seconds).
    static let probeGraceMilliseconds: UInt64 = 1000

    /// The monotonic clock in milliseconds: what silence is measured with (wall time may jump).
    static func monotonicMilliseconds() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1000 + UInt64(t.tv_nsec) / 1_000_000
    }

    /// Milliseconds from `then` (monotonicMilliseconds) to now; 0 if `then` is later.
    static func millisecondsSince(_ then: UInt64) -> UInt64 {
        let now = monotonicMilliseconds()
        return now > then ? now - then : 0
    }
}
