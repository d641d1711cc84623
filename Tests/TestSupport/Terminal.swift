import Foundation

/// A real terminal for tests: a detached tmux session running one command, read with
/// capture-pane and typed into with send-keys (as a person at the keyboard would).
public final class TmuxSession {
    public let name: String
    let socket: String
    /// The tmux server, parent of the pane's shell and through it of the program under test.
    private var serverPID: pid_t = 0
    private var closed = false

    public init(command: [String], environment: [String: String], width: Int = 120, height: Int = 30) throws {
        name = "th\(getpid())\(Int.random(in: 0..<1_000_000))"
        socket = "/tmp/tmux-\(name).sock"
        let env = environment.map { "\($0.key)=\(Self.quote($0.value))" }.joined(separator: " ")
        let line = "env -i \(env) " + command.map(Self.quote).joined(separator: " ") + "; echo \"[exit $?]\"; sleep 30"
        // The tmux server outlives this call and would hold captured pipes open forever, so
        // the client runs with /dev/null for output and is waited for directly.
        let status = Shell.spawnDetachedOutput("/usr/bin/tmux", ["-S", socket, "new-session", "-d", "-s", name,
                                                                 "-x", "\(width)", "-y", "\(height)", line])
        guard status == 0 else { throw Shell.Failure(description: "tmux new-session failed with status \(status)") }
        // The server daemonises (its parent is gone by now), so it is found by asking it.
        let pid = (try? Shell.run("/usr/bin/tmux", ["-S", socket, "display-message", "-p", "#{pid}"]).stdout)
            .flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard let pid else {
            _ = try? Shell.run("/usr/bin/tmux", ["-S", socket, "kill-server"])
            throw Shell.Failure(description: "tmux server of \(name) did not say its pid")
        }
        serverPID = pid
    }

    deinit { close() }

    static func quote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    public func screen() -> String {
        (try? Shell.run("/usr/bin/tmux", ["-S", socket, "capture-pane", "-p", "-t", name]).stdout) ?? ""
    }

    /// Waits until the screen contains text; returns the screen (or what it was at the deadline).
    /// The deadline only bounds a failing test: with the whole suite running on two cores a
    /// connection plus a command has been seen to take more than 20 s, so it is generous.
    @discardableResult
    public func waitFor(_ text: String, timeout: Double = 60) -> String {
        var s = ""
        Wait.until(timeout: timeout, poll: 0.05) { s = screen(); return s.contains(text) }
        return s
    }

    /// Waits until text appears at least `count` times on the screen.
    @discardableResult
    public func waitFor(_ text: String, count: Int, timeout: Double = 60) -> String {
        var s = ""
        Wait.until(timeout: timeout, poll: 0.05) { s = screen(); return s.components(separatedBy: text).count - 1 >= count }
        return s
    }

    /// Types literal text, then Enter if asked.
    public func type(_ text: String, enter: Bool = true) {
        _ = try? Shell.run("/usr/bin/tmux", ["-S", socket, "send-keys", "-t", name, "-l", text])
        if enter { _ = try? Shell.run("/usr/bin/tmux", ["-S", socket, "send-keys", "-t", name, "Enter"]) }
    }

    /// Presses named keys, as tmux spells them ("Up", "Left", "C-a", "BSpace", "Enter").
    public func press(_ keys: String...) {
        _ = try? Shell.run("/usr/bin/tmux", ["-S", socket, "send-keys", "-t", name] + keys)
    }

    /// Resizes the window (the program inside gets SIGWINCH).
    public func resize(columns: Int, rows: Int) {
        _ = try? Shell.run("/usr/bin/tmux", ["-S", socket, "resize-window", "-t", name, "-x", String(columns), "-y", String(rows)])
    }

    /// Ends the server, the pane and everything the program in it started; idempotent. The
    /// pane gets SIGHUP from `kill-server`, as a closed terminal would, and a while to end; what
    /// still runs after that (a program that ignores SIGHUP, a child it left behind) is killed,
    /// so no test leaves a process behind.
    public func close() {
        guard !closed else { return }
        closed = true
        let members = serverPID > 0 ? ProcessTree.members(of: serverPID) : []
        _ = try? Shell.run("/usr/bin/tmux", ["-S", socket, "kill-server"])
        if !ProcessTree.waitUntilGone(members, timeout: 10) { ProcessTree.kill(members) }
        try? FileManager.default.removeItem(atPath: socket)
    }
}
