import Foundation
import Glibc

/// Runs a plugin for the first time in a child process (`termhost-probe`), GStreamer's
/// plugin-scanner model: a constructor that crashes, an init() that hangs, a missing entry
/// symbol or a library that disagrees with its manifest is found there, and the host carries on.
///
/// Protocol: the child receives the already-checked library as descriptor 3 and the manifest
/// path; it writes `stage <name>` before each step and finally `report <json>` or
/// `failure <json>` to descriptor 4. If it dies, the last stage written says where. The
/// plugin's own stdout and stderr go to /dev/null, so nothing it prints can be taken for the
/// protocol or reach the user's terminal.
public struct ProbeRunner: Sendable {
    public var executable: String
    public var timeout: Double

    public init(executable: String = ProbeRunner.defaultExecutable(), timeout: Double = ProbeRunner.defaultTimeout()) {
        self.executable = executable
        self.timeout = timeout
    }

    /// `$TERMHOST_PROBE`, else `termhost-probe` beside the running executable.
    public static func defaultExecutable() -> String {
        if let p = ProcessInfo.processInfo.environment["TERMHOST_PROBE"], !p.isEmpty { return p }
        return (ExecutablePath.current as NSString).deletingLastPathComponent + "/termhost-probe"
    }

    /// `$TERMHOST_PROBE_TIMEOUT` seconds, else 5.
    public static func defaultTimeout() -> Double {
        ProcessInfo.processInfo.environment["TERMHOST_PROBE_TIMEOUT"].flatMap(Double.init) ?? 5
    }

    public func probe(fd: Int32, record: PluginRecord) -> ProbeCache.Outcome {
        guard let manifest = record.manifest else { return .quarantined(.probeFailed("no manifest")) }
        let manifestPath = record.directory + "/manifest.json"
        let args = [executable, "--library-fd", "3", "--report-fd", "4", "--manifest", manifestPath,
                    "--display-path", record.libraryPath ?? manifestPath]
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { return .quarantined(.probeUnavailable("pipe: \(String(cString: strerror(errno)))")) }
        for p in pipeFDs { _ = fcntl(p, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fd, 3)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 4)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        let cArgs = args.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        // The Swift runtime's backtracer would turn a plugin's crash into pages of output and
        // seconds of delay; the probe only needs the signal.
        let env = ProcessInfo.processInfo.environment.filter { $0.key != "SWIFT_BACKTRACE" }
            .map { "\($0.key)=\($0.value)" } + ["SWIFT_BACKTRACE=enable=no"]
        let cEnv = env.map { strdup($0) } + [nil]
        defer { cEnv.forEach { free($0) } }
        let rc = posix_spawn(&pid, executable, &actions, nil, cArgs, cEnv)
        close(pipeFDs[1])
        guard rc == 0 else {
            close(pipeFDs[0])
            return .quarantined(.probeUnavailable("cannot start \(executable): \(String(cString: strerror(rc)))"))
        }
        let (output, timedOut) = readAll(pipeFDs[0], pid: pid)
        close(pipeFDs[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}

        let lines = output.split(separator: "\n").map(String.init)
        let stage = lines.last { $0.hasPrefix("stage ") }.map { String($0.dropFirst(6)) } ?? "starting the probe"
        if timedOut { return .quarantined(.probeTimedOut(seconds: timeout, stage: stage)) }
        let signaled = (status & 0x7f) != 0 && (status & 0x7f) != 0x7f
        if signaled { return .quarantined(.crashedInProbe(signal: status & 0x7f, stage: stage)) }
        let decoder = JSONDecoder()
        if let line = lines.last(where: { $0.hasPrefix("failure ") }),
           let failure = try? decoder.decode(LoadFailure.self, from: Data(line.dropFirst(8).utf8)) {
            return .quarantined(failure)
        }
        guard let line = lines.last(where: { $0.hasPrefix("report ") }),
              let report = try? decoder.decode(ProbeReport.self, from: Data(line.dropFirst(7).utf8)) else {
            let code = (status >> 8) & 0xff
            return .quarantined(.probeFailed("the probe exited with status \(code) in \(stage) without a report"))
        }
        if let mismatch = report.mismatch(with: manifest) { return .quarantined(mismatch) }
        return .passed(report)
    }

    /// Reads the child's stdout until EOF or the deadline; on the deadline the child is killed.
    private func readAll(_ fd: Int32, pid: pid_t) -> (String, Bool) {
        var data = [UInt8]()
        let deadline = Date().addingTimeInterval(timeout)
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let left = deadline.timeIntervalSinceNow
            if left <= 0 {
                kill(pid, SIGKILL)
                return (String(decoding: data, as: UTF8.self), true)
            }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(min(left, 1) * 1000) + 1)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { continue }
            let n = read(fd, &buf, buf.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return (String(decoding: data, as: UTF8.self), false) }
            if data.count < 1 << 20 { data += buf[0..<n] }
        }
    }
}
