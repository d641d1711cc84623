import Foundation
@testable import MetricsCore
import TestSupport

extension SSHHarness {
    /// The SSH harness (scratch home, trusted key, real sshd) with the Metrics plugin beside
    /// the SSH plugin.
    static func metrics(dir: TemporaryDirectory, authorize: Bool = true, trustServer: Bool = true,
                        serverConfig: String = "") throws -> SSHHarness {
        let h = try SSHHarness(dir: dir, trustServer: trustServer, authorize: authorize, serverConfig: serverConfig)
        _ = try Fixtures.bundle("libMetricsPlugin.so", as: "org.termhost.metrics", in: h.plugins)
        return h
    }
}

enum Local {
    /// The file's text, "" when it cannot be read: a /proc file of a process that ended
    /// meanwhile fails with ESRCH (readDataToEndOfFile would trap on it).
    static func read(_ path: String) -> String {
        guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.readToEnd() else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    static var memTotalBytes: Double { Double(MemInfo.parse(read("/proc/meminfo"))!.total!) }
    static var uptime: Double { Uptime.parse(read("/proc/uptime"))! }
    static var coreCount: Int { CPUStat.parse(read("/proc/stat"))!.cores.count }
    static var interfaces: Set<String> { Set(NetDev.parse(read("/proc/net/dev"))!.keys) }

    /// Live processes (pid, argv) whose ancestors include pid `root`.
    static func descendants(of root: pid_t) -> [(pid: Int, command: String)] {
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int($0) }
        var parent: [Int: Int] = [:]
        for p in pids {
            let stat = read("/proc/\(p)/stat")
            guard let close = stat.lastIndex(of: ")") else { continue }
            let f = stat[stat.index(after: close)...].split(separator: " ")
            if f.count > 1, let pp = Int(f[1]) { parent[p] = pp }
        }
        return pids.filter { p in
            var q = parent[p]
            var hops = 0
            while let x = q, hops < 64 { if x == Int(root) { return true }; q = parent[x]; hops += 1 }
            return false
        }.map { ($0, read("/proc/\($0)/cmdline").replacingOccurrences(of: "\0", with: " ")) }
    }

    /// The remote sampling loops started by this sshd.
    /// The remote sampling loops started by this sshd (a loop's own watcher subshell, a fork
    /// with the same command line, is not counted twice).
    static func samplerLoops(under server: SSHServer) -> Int {
        let loops = descendants(of: server.pid).filter { $0.command.contains("sh -c") && $0.command.contains(SamplerScript.processName) }
        let pids = Set(loops.map(\.pid))
        return loops.filter { !pids.contains(parentOf($0.pid) ?? -1) }.count
    }

    static func parentOf(_ pid: Int) -> Int? {
        let stat = read("/proc/\(pid)/stat")
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let f = stat[stat.index(after: close)...].split(separator: " ")
        return f.count > 1 ? Int(f[1]) : nil
    }
}

enum Fixture {
    static func text(_ name: String) -> String { Local.read(Paths.root + "/Tests/MetricsPluginTests/Fixtures/" + name) }

    /// Every sample a recorded stream holds, and the parser after it.
    static func samples(_ name: String) -> ([RawSample], FrameParser) {
        var parser = FrameParser()
        let samples = parser.feed(Array(text(name).utf8))
        return (samples, parser)
    }
}

/// The sampling loop run here as sshd runs it: in a session (and process group) of its own,
/// stdin a pipe that the test closes to end it.
struct LoopRun {
    let stdout: String
    /// Processes of the loop's process group still alive a second after it ended (its watcher
    /// kills the group at once on end of input, so none should be).
    let leftovers: [(pid: Int, command: String)]
    /// From the end of its input to its exit.
    let seconds: Double

    /// shell: e.g. ["/usr/bin/dash"]; path: PATH for the loop (nil: this process's). The loop
    /// runs until its output so far satisfies `until` (or 60 s pass), then its input ends.
    /// The loop starts as the leader of a new process group (posix_spawn's SETPGROUP), as
    /// under sshd; only that group is ever signalled here.
    static func run(_ shell: [String], args: [String], path: String? = nil, until enough: (String) -> Bool) throws -> LoopRun {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let script = dir.write("loop.sh", SamplerScript.body)
        var input: [Int32] = [-1, -1], output: [Int32] = [-1, -1]
        guard pipe(&input) == 0, pipe(&output) == 0 else { throw Shell.Failure(description: "pipe failed") }
        // Close-on-exec: a child another test spawns meanwhile must not keep our stdin pipe open
        // (the loop would never see end-of-file). dup2 in the child clears it on 0 and 1.
        for fd in input + output { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        for fd in input + output { posix_spawn_file_actions_addclose(&actions, fd) }
        guard Shell.closeInheritedDescriptors(&actions) else {
            for fd in input + output { close(fd) }
            throw Shell.Failure(description: "spawn failed: no closefrom")
        }
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attr, 0)
        var env = ProcessInfo.processInfo.environment
        if let path { env["PATH"] = path }
        let args = shell + [script] + args
        let argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, shell[0], &actions, &attr, argv, envp)
        close(input[0]); close(output[1])
        guard rc == 0 else { close(input[1]); close(output[0]); throw Shell.Failure(description: "spawn failed: \(rc)") }
        final class Box: @unchecked Sendable {
            private let lock = NSLock()
            private var bytes = [UInt8]()
            func append(_ more: ArraySlice<UInt8>) { lock.withLock { bytes += more } }
            var text: String { lock.withLock { String(decoding: bytes, as: UTF8.self) } }
        }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        let readFD = output[0]
        DispatchQueue.global().async {
            var buf = [UInt8](repeating: 0, count: 65536)
            while true { let n = read(readFD, &buf, buf.count); if n <= 0 { break }; box.append(buf[0..<n]) }
            done.signal()
        }
        Wait.until(poll: 0.05) { enough(box.text) }
        let started = Date()
        close(input[1])
        var status: Int32 = 0
        Wait.until(timeout: 10) { waitpid(pid, &status, WNOHANG) != 0 }
        if waitpid(pid, &status, WNOHANG) == 0 { kill(-pid, SIGKILL); waitpid(pid, &status, 0) }
        let elapsed = Date().timeIntervalSince(started)
        var left = Local.groupMembers(Int(pid))
        Wait.until(timeout: 1) { left = Local.groupMembers(Int(pid)); return left.isEmpty }
        if !left.isEmpty { kill(-pid, SIGKILL) }
        _ = done.wait(timeout: .now() + 5)
        close(readFD)
        return LoopRun(stdout: box.text, leftovers: left, seconds: elapsed)
    }
}

extension Local {
    /// The process group (stat field 5) of pid.
    static func group(of pid: Int) -> Int? { statField(pid, 5) }

    static func statField(_ pid: Int, _ n: Int) -> Int? {
        let stat = read("/proc/\(pid)/stat")
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let f = stat[stat.index(after: close)...].split(separator: " ")
        return f.count > n - 3 ? Int(f[n - 3]) : nil
    }

    /// Live processes in process group pgid.
    static func groupMembers(_ pgid: Int) -> [(pid: Int, command: String)] {
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int($0) }
        return pids.filter { group(of: $0) == pgid && !isZombie($0) }
            .map { ($0, read("/proc/\($0)/cmdline").replacingOccurrences(of: "\0", with: " ")) }
    }

    /// True when pid is stopped (state T: SIGTSTP or SIGSTOP).
    static func isStopped(_ pid: Int) -> Bool {
        let stat = read("/proc/\(pid)/stat")
        guard let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first == "T"
    }

    static func isZombie(_ pid: Int) -> Bool {
        let stat = read("/proc/\(pid)/stat")
        guard let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
    }
}
