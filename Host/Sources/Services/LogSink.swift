import Foundation
import Glibc
import TermhostRegistry
import TermhostSDK

/// Leveled log lines to stderr (at or above `stderrLevel`) and to a file (at or above
/// `fileLevel`), each prefixed with its source ("host" or a plugin ID).
public final class LogSink: @unchecked Sendable {
    public enum Level: Int, Sendable, Comparable, CustomStringConvertible {
        case debug = 0, info, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        public var description: String { ["debug", "info", "warning", "error"][rawValue] }
        public init?(name: String) {
            guard let i = ["debug", "info", "warning", "error"].firstIndex(of: name.lowercased()) else { return nil }
            self.init(rawValue: i)
        }
    }

    public let filePath: String?
    public var stderrLevel: Level
    public var fileLevel: Level
    private let lock = RecursiveLock()
    private var fileFD: Int32 = -1

    public init(filePath: String?, stderrLevel: Level = .warning, fileLevel: Level = .info) {
        self.filePath = filePath
        self.stderrLevel = stderrLevel
        self.fileLevel = fileLevel
        if let filePath {
            // Private (0700, 0600) whatever the umask, tightened when an older Termhost left them
            // readable, and not written at all when someone else could have put lines in it.
            var problem = PrivateFile.prepare(ownDirectory: PathText.parent(filePath))
            if problem == nil {
                // O_NOFOLLOW: a symbolic link planted at the log's name must not make the host
                // append to (or create) whatever file it points to.
                fileFD = open(filePath, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
                if fileFD >= 0, let refused = PrivateFile.check(fd: fileFD, path: filePath, privateMode: 0o600, fix: "chmod 600 \(filePath)") {
                    problem = refused
                    close(fileFD)
                    fileFD = -1
                }
            }
            if let problem { emit(2, "termhost: not logging to a file: \(VisibleText.of(problem))\n") }
        }
    }

    deinit { if fileFD >= 0 { close(fileFD) } }

    public func log(_ level: Level, _ source: String, _ message: String) {
        // One entry is one line, and nothing a plugin logs (which often quotes a server, a file
        // or a remote name) can move the cursor, set a title or forge another entry: newlines
        // become spaces and every other control character is shown as OpenSSH shows it.
        let clean = VisibleText.of(message.replacingOccurrences(of: "\n", with: " "))
        lock.withLock {
            if level >= stderrLevel { emit(2, "termhost: \(source): \(level): \(clean)\n") }
            if level >= fileLevel, fileFD >= 0 {
                let stamp = ISO8601DateFormatter().string(from: Date())
                emit(fileFD, "\(stamp) \(level) [\(source)] \(clean)\n")
            }
        }
    }

    private func emit(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
