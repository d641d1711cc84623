import Foundation
import Glibc

/// Runtime state for operators: each `forward run` process writes its rules' states to
/// `run-<pid>.json` in the run directory (RunDirectory: `$XDG_STATE_HOME/termhost/forwarding`,
/// 0700, ours; the file 0600, replaced atomically, removed at shutdown) so that
/// `termhost forward list` in another shell shows them. Never in the store: runtime state is
/// not durable data and is never synced.
struct StatusFile: Sendable {
    struct Entry: Codable, Sendable {
        var id: String
        var name: String
        var state: String
    }

    static var directory: String { RunDirectory.path() }

    let path = StatusFile.directory + "/run-\(getpid()).json"

    /// Written only into a directory that passed RunDirectory's checks (the run prepared it).
    func write(_ entries: [Entry]) {
        guard (try? RunDirectory.checked()) != nil, let data = try? JSONEncoder().encode(entries) else { return }
        _ = RunDirectory.replace(path, with: Array(data))
    }

    func remove() { unlink(path) }

    /// States by rule ID from every live `forward run` process.
    static func readAll() -> [String: String] {
        var states: [String: String] = [:]
        for run in liveRuns(suffix: ".json") {
            guard let bytes = RunDirectory.read(run.path),
                  let entries = try? JSONDecoder().decode([Entry].self, from: Data(bytes)) else { continue }
            for e in entries { states[e.id] = e.state }
        }
        return states
    }

    /// The `run-<pid><suffix>` files (status or control socket) whose process is alive, sorted
    /// by name; files of dead processes are removed on the way (they died without cleanup).
    /// None when the directory is not safe to trust (RunDirectory.checked).
    static func liveRuns(suffix: String) -> [(pid: pid_t, path: String)] {
        guard let dir = try? RunDirectory.checked() else { return [] }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        var runs: [(pid: pid_t, path: String)] = []
        for file in files.sorted() where file.hasPrefix("run-") && file.hasSuffix(suffix) {
            let path = dir + "/" + file
            guard let pid = pid_t(file.dropFirst(4).dropLast(suffix.count)), pid > 0,
                  kill(pid, 0) == 0 || errno == EPERM else {
                unlink(path)
                continue
            }
            runs.append((pid, path))
        }
        return runs
    }
}
