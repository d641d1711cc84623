import Foundation

/// What a background program writes to a pipe, collected as it arrives, for tests that wait
/// for a line while the program keeps running.
public final class CollectedOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()

    public init(_ pipe: Pipe) {
        pipe.fileHandleForReading.readabilityHandler = { [self] handle in
            let chunk = handle.availableData
            lock.lock(); data.append(chunk); lock.unlock()
        }
    }

    public var text: String { lock.lock(); defer { lock.unlock() }; return String(decoding: data, as: UTF8.self) }

    /// A process's state letter from /proc/PID/stat (T: stopped, as after SIGTSTP).
    public static func processState(_ pid: pid_t) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ").first.map(String.init)
    }
}
