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

    private let condition = NSCondition()
    private var limits = (active: defaultActive, perHost: defaultPerHost, segments: defaultSegments)
    private var active = 0
    private var perHost: [String: Int] = [:]

    var maxActive: Int { condition.withLock { limits.active } }
    var maxPerHost: Int { condition.withLock { limits.perHost } }
    var segments: Int { condition.withLock { limits.segments } }

    /// Sets the limits, clamped to 1-100 and 1-min(50, maxActive); maxPerHost nil is the
    /// default, lowered silently when maxActive is smaller; segments nil is the default, and
    /// are clamped to 1-4. Returns a note for each value given that had to be clamped, naming
    /// the setting.
    @discardableResult
    func setLimits(maxActive: Int?, maxPerHost: Int?, segments: Int? = nil) -> [String] {
        var notes: [String] = []
        condition.withLock {
            let parts = segments ?? TransferQueue.defaultSegments
            limits.segments = min(max(parts, TransferQueue.segmentBounds.lowerBound), TransferQueue.segmentBounds.upperBound)
            if limits.segments != parts { notes.append("segments=\(parts) is outside 1-4; using \(limits.segments)") }
            if let v = maxActive {
                let clamped = min(max(v, TransferQueue.activeBounds.lowerBound), TransferQueue.activeBounds.upperBound)
                if clamped != v { notes.append("maxActive=\(v) is outside 1-100; using \(clamped)") }
                limits.active = clamped
            }
            let ceiling = min(TransferQueue.perHostCeiling, limits.active)
            let wanted = maxPerHost ?? TransferQueue.defaultPerHost
            let clamped = min(max(wanted, 1), ceiling)
            if clamped != wanted, maxPerHost != nil { notes.append("maxPerHost=\(wanted) is outside 1-\(ceiling) (min(50, maxActive)); using \(clamped)") }
            limits.perHost = clamped
            condition.broadcast()
        }
        return notes
    }

    /// The limits from the feature's settings (operator policy or user config), unset ones at
    /// their defaults; logs and returns a note for each value that had to be clamped.
    @discardableResult
    func apply(settingsOf host: PluginHost) -> [String] {
        func number(_ key: String) -> Int? { (try? host.setting(feature: "org.termhost.sftp", key: key)).flatMap { $0.flatMap { Int($0) } } }
        let notes = setLimits(maxActive: number("maxActive") ?? TransferQueue.defaultActive, maxPerHost: number("maxPerHost"),
                              segments: number("segments"))
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
