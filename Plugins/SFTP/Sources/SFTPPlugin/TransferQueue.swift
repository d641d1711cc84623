import Foundation
import TermhostSDK

/// The process-wide transfer queue (a process-scope service of the plugin, NOTES §8): at most
/// `maxActive` files move at once in the whole process, at most `maxPerHost` to or from one
/// host. Limits are read each time a file asks for a slot, so a change steers what starts
/// next and never touches a file already moving.
final class TransferQueue: @unchecked Sendable {
    static let shared = TransferQueue()

    static let defaultActive = 15, defaultPerHost = 5
    static let activeBounds = 1...100
    static let perHostCeiling = 50
    /// Connections for one large file (Segments): one per core but one, which is left to the
    /// work around the cipher (the download's writer, the kernel's network and page-cache work,
    /// on loopback the server). Measured on 2 cores, a second connection made downloads and
    /// uploads slower (Docs/SFTP.md, Speed).
    static let segmentBounds = 1...4
    static let defaultSegments = min(max(ProcessInfo.processInfo.activeProcessorCount - 1, 1), 4)
    /// SFTP channels of one connection that one large upload spreads over (UploadLanes). At
    /// most 8: OpenSSH's sshd allows 10 channels per connection (MaxSessions), and SFTP's
    /// first channel and its extensions channel (OpenSSHExtensions) are two of them.
    static let channelBounds = 1...8
    static let defaultChannels = 8

    private let condition = NSCondition()
    private var limits = (active: defaultActive, perHost: defaultPerHost, segments: defaultSegments, channels: defaultChannels)
    private var active = 0
    private var perHost: [String: Int] = [:]

    var maxActive: Int { condition.withLock { limits.active } }
    var maxPerHost: Int { condition.withLock { limits.perHost } }
    var segments: Int { condition.withLock { limits.segments } }
    var channels: Int { condition.withLock { limits.channels } }

    /// Sets the limits, clamped to 1-100 and 1-min(50, maxActive); maxPerHost nil is the
    /// default, lowered silently when maxActive is smaller; segments and channels nil are
    /// their defaults, and are clamped to 1-4 and 1-8. Returns a note for each value given that had to be clamped, naming
    /// the setting and its range (BoundedNumber's words).
    @discardableResult
    func setLimits(maxActive: Int?, maxPerHost: Int?, segments: Int? = nil, channels: Int? = nil) -> [String] {
        var notes: [String] = []
        /// v within bounds, or the nearest bound with a note.
        func bounded(_ v: Int, _ name: String, _ bounds: ClosedRange<Int>, why: String = "") -> Int {
            do throws(NumberOutOfRange) { return try BoundedNumber.check(v, name: name, in: bounds) } catch {
                let clamped = min(max(v, bounds.lowerBound), bounds.upperBound)
                notes.append("\(error); using \(clamped)\(why)")
                return clamped
            }
        }
        condition.withLock {
            limits.segments = segments.map { bounded($0, "segments", TransferQueue.segmentBounds) } ?? TransferQueue.defaultSegments
            limits.channels = channels.map { bounded($0, "channels", TransferQueue.channelBounds) } ?? TransferQueue.defaultChannels
            if let v = maxActive { limits.active = bounded(v, "maxActive", TransferQueue.activeBounds) }
            let ceiling = min(TransferQueue.perHostCeiling, limits.active)
            if let v = maxPerHost {
                limits.perHost = bounded(v, "maxPerHost", 1...ceiling, why: " (at most min(50, maxActive))")
            } else {
                limits.perHost = min(TransferQueue.defaultPerHost, ceiling)
            }
            condition.broadcast()
        }
        return notes
    }

    /// The limits from the feature's settings (operator policy or user config), unset ones at
    /// their defaults; logs and returns a note for each value that had to be clamped, or was
    /// not a whole number (then the default is used).
    @discardableResult
    func apply(settingsOf host: PluginHost) -> [String] {
        var notes: [String] = []
        func number(_ key: String, _ bounds: ClosedRange<Int>, _ fallback: Int) -> Int? {
            guard let text = (try? host.setting(feature: "org.termhost.sftp", key: key)) ?? nil else { return nil }
            // Out of range is clamped by setLimits; only what is no number at all stops here.
            if let v = Int(text) { return v }
            let error = NumberOutOfRange(name: key, text: text, expected: "a whole number from \(bounds.lowerBound) to \(bounds.upperBound)")
            notes.append("\(error); using \(fallback)")
            return nil
        }
        let active = number("maxActive", TransferQueue.activeBounds, TransferQueue.defaultActive) ?? TransferQueue.defaultActive
        let perHost = number("maxPerHost", 1...TransferQueue.perHostCeiling, min(TransferQueue.defaultPerHost, active))
        let segments = number("segments", TransferQueue.segmentBounds, TransferQueue.defaultSegments)
        let channels = number("channels", TransferQueue.channelBounds, TransferQueue.defaultChannels)
        notes += setLimits(maxActive: active, maxPerHost: perHost, segments: segments, channels: channels)
        notes.forEach { host.log(.warning, "sftp: setting \($0)") }
        return notes
    }

    /// Waits for a slot for host; false when the control asked to stop meanwhile.
    func acquire(host: String, control: TransferControl) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while active >= limits.active || perHost[host, default: 0] >= limits.perHost {
            if control.requested != .none { return false }
            _ = condition.wait(until: Date().addingTimeInterval(0.1))
        }
        active += 1
        perHost[host, default: 0] += 1
        return true
    }

    /// A slot for host if one is free now; false otherwise (never waits).
    func tryAcquire(host: String) -> Bool {
        condition.withLock {
            guard active < limits.active, perHost[host, default: 0] < limits.perHost else { return false }
            active += 1
            perHost[host, default: 0] += 1
            return true
        }
    }

    func release(host: String) {
        condition.withLock {
            active -= 1
            perHost[host, default: 1] -= 1
            if perHost[host] == 0 { perHost[host] = nil }
            condition.broadcast()
        }
    }
}
