import Foundation
import Glibc

/// Runtime state for operators: each `forward run` process writes its rules' states to
/// `$XDG_STATE_HOME/termhost/forwarding/run-<pid>.json` (replaced atomically, removed at
/// shutdown) so that `termhost forward list` in another shell shows them. Never in the store:
/// runtime state is not durable data and is never synced.
struct StatusFile: Sendable {
    struct Entry: Codable, Sendable {
        var id: String
        var name: String
        var state: String
    }

    static var directory: String {
        let env = ProcessInfo.processInfo.environment
        let base = env["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.local/state")
        return base + "/termhost/forwarding"
    }

    let path = StatusFile.directory + "/run-\(getpid()).json"

    func write(_ entries: [Entry]) {
        try? FileManager.default.createDirectory(atPath: StatusFile.directory, withIntermediateDirectories: true)
        guard let data = try? JSONEncoder().encode(entries) else { return }
        try? data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// States by rule ID from every live `forward run` process; files of dead ones are removed.
    static func readAll() -> [String: String] {
        var states: [String: String] = [:]
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for file in files where file.hasPrefix("run-") && file.hasSuffix(".json") {
            let pid = pid_t(file.dropFirst(4).dropLast(5)) ?? 0
            let full = directory + "/" + file
            guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else {
                try? FileManager.default.removeItem(atPath: full)
                continue
            }
            guard let data = FileManager.default.contents(atPath: full),
                  let entries = try? JSONDecoder().decode([Entry].self, from: data) else { continue }
            for e in entries { states[e.id] = e.state }
        }
        return states
    }
}
