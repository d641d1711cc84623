import Foundation

/// A process as the store remembers it: its ID and its start time (field 22 of
/// /proc/PID/stat, in clock ticks since boot), so a reused PID is not mistaken for the process
/// that wrote a run.
struct ProcessIdentity: Equatable {
    var pid: Int32
    var startTicks: UInt64

    static let current = ProcessIdentity(pid: getpid(), startTicks: startTicks(of: getpid()) ?? 0)

    /// Whether this very process still runs (not a later one with the same PID).
    var isAlive: Bool {
        guard let ticks = Self.startTicks(of: pid) else { return false }
        return ticks == startTicks
    }

    private static func startTicks(of pid: Int32) -> UInt64? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After "pid (comm)" the fields are numbered from 3 (state); starttime is field 22.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? UInt64(fields[19]) : nil
    }
}
