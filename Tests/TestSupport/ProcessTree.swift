import Foundation
import Glibc

/// The processes below one process a test started (a server and every session it forked; a
/// tmux server and the programs in its panes), found through /proc by parent PID, so that a
/// test ends all of them and not only the one it started.
///
/// Why not a process group: sshd's and Dropbear's per-connection processes and tmux's panes
/// each call setsid(), so the group of the process a test started holds that process alone,
/// and ending it orphans the rest (seen: `sshd: root@pts/N` and tmux servers running long after
/// the suite). Why by PID and start time (/proc/PID/stat field 22): a PID freed and taken by
/// an unrelated program is never signalled.
///
/// Threading: [any-thread]; every call reads /proc afresh.
public enum ProcessTree {
    /// One process, named so that a reused PID is not mistaken for it.
    public struct Member: Hashable, Sendable {
        public let pid: pid_t
        let start: UInt64
    }

    /// `root` and every live descendant of it (zombies left out), root first.
    public static func members(of root: pid_t) -> [Member] {
        let table = processes()
        guard let rootEntry = table[root] else { return [] }
        var children: [pid_t: [pid_t]] = [:]
        for (pid, entry) in table { children[entry.parent, default: []].append(pid) }
        var found = [Member(pid: root, start: rootEntry.start)]
        var queue = [root]
        while let next = queue.popLast() {
            for child in children[next] ?? [] where child != root {
                found.append(Member(pid: child, start: table[child]!.start))
                queue.append(child)
            }
        }
        return found
    }

    /// Ends `root` and all below it: stops each one (SIGSTOP, so none forks again) until a scan
    /// finds no new one, then kills them all (SIGKILL). `root`, when it is the caller's child,
    /// is left for the caller to reap.
    public static func kill(_ root: pid_t) {
        var stopped: [Member] = []
        for _ in 0..<100 {
            let fresh = members(of: root).filter { !stopped.contains($0) }
            if fresh.isEmpty { break }
            for member in fresh where isAlive(member) { Glibc.kill(member.pid, SIGSTOP) }
            stopped += fresh
        }
        kill(stopped)
    }

    /// Kills (SIGKILL) each of `members` still alive: those of a tree whose root already ended
    /// and so no longer leads to them.
    public static func kill(_ members: [Member]) {
        for member in members where isAlive(member) { Glibc.kill(member.pid, SIGKILL) }
    }

    /// Waits until none of `members` is alive, at most `timeout` seconds; true if none is.
    @discardableResult
    public static func waitUntilGone(_ members: [Member], timeout: Double) -> Bool {
        Wait.until(timeout: timeout, poll: 0.02) { !members.contains(where: isAlive) }
    }

    /// True while the process runs (a zombie has ended) and is the one that was seen.
    public static func isAlive(_ member: Member) -> Bool {
        guard let entry = stat(member.pid) else { return false }
        return entry.start == member.start && entry.state != "Z"
    }

    private struct Entry {
        let parent: pid_t
        let start: UInt64
        let state: Character
    }

    /// Every live process by PID.
    private static func processes() -> [pid_t: Entry] {
        var table: [pid_t: Entry] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(name), let entry = stat(pid), entry.state != "Z" else { continue }
            table[pid] = entry
        }
        return table
    }

    /// /proc/PID/stat: "PID (COMM) STATE PPID ..."; COMM may hold spaces and parentheses, so
    /// the fields are counted from the last ')'. Start time is field 22.
    private static func stat(_ pid: pid_t) -> Entry? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let state = fields[0].first, let parent = pid_t(fields[1]),
              let start = UInt64(fields[19]) else { return nil }
        return Entry(parent: parent, start: start, state: state)
    }
}
