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

    /// States by rule ID from every live `forward run` process.
    static func readAll() -> [String: String] {
        var states: [String: String] = [:]
        for run in liveRuns(suffix: ".json") {
            guard let data = FileManager.default.contents(atPath: run.path),
                  let entries = try? JSONDecoder().decode([Entry].self, from: data) else { continue }
            for e in entries { states[e.id] = e.state }
        }
        return states
    }

    /// The `run-<pid><suffix>` files (status or control socket) whose process is alive, sorted
    /// by name; files of dead processes are removed on the way (they died without cleanup).
    static func liveRuns(suffix: String) -> [(pid: pid_t, path: String)] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var runs: [(pid: pid_t, path: String)] = []
        for file in files.sorted() where file.hasPrefix("run-") && file.hasSuffix(suffix) {
            let path = directory + "/" + file
            guard let pid = pid_t(file.dropFirst(4).dropLast(suffix.count)), pid > 0,
                  kill(pid, 0) == 0 || errno == EPERM else {
                try? FileManager.default.removeItem(atPath: path)
                continue
            }
            runs.append((pid, path))
        }
        return runs
    }
}
