import Foundation
import Glibc
import TermhostSDK

/// Runs a plugin for the first time in a child process (`termhost-probe`), GStreamer's
/// plugin-scanner model: a constructor that crashes, an init() that hangs, a missing entry
/// symbol or a library that disagrees with its manifest is found there, and the host carries on.
///
/// Protocol: the child receives the already-checked library as descriptor 3, the libraries its
/// plugin set pins as 5 and up (PinnedLibraries), and the manifest path (none when the
/// manifest is being derived); it writes `stage <name>` before each step
/// and finally `report <json>` or `failure <json>` to descriptor 4. If it dies, the last stage
/// written says where. The plugin's own stdout and stderr go to /dev/null, so nothing it
/// prints can be taken for the protocol or reach the user's terminal.
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
        return PathText.parent(ExecutablePath.current) + "/termhost-probe"
    }

    /// The range `$TERMHOST_PROBE_TIMEOUT` must be in, in seconds. Below 0.1 s no plugin could
    /// pass (and every one would be quarantined); beyond 10 minutes a hang is not worth waiting for.
    public static let timeoutRange: ClosedRange<Double> = 0.1...600

    /// `$TERMHOST_PROBE_TIMEOUT` seconds, else 5. An invalid value also gives 5 here; the CLI
    /// refuses it first, with `environmentProblem()`.
    public static func defaultTimeout(_ env: [String: String] = ProcessInfo.processInfo.environment) -> Double {
        guard let text = env["TERMHOST_PROBE_TIMEOUT"],
              let value = try? BoundedNumber.decimal(text, name: "TERMHOST_PROBE_TIMEOUT", in: timeoutRange, unit: "seconds")
        else { return 5 }
        return value
    }

    /// "TERMHOST_PROBE_TIMEOUT must be a number of seconds from 0.1 to 600, not 'nan'", or nil.
    public static func environmentProblem(_ env: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard let text = env["TERMHOST_PROBE_TIMEOUT"] else { return nil }
        do { _ = try BoundedNumber.decimal(text, name: "TERMHOST_PROBE_TIMEOUT", in: timeoutRange, unit: "seconds") } catch {
            return error.description
        }
        return nil
    }

    /// The timeout in force: `timeout` brought into `timeoutRange` (5 s when not a number), so
    /// that deadline arithmetic can never trap whatever a caller set.
    public var boundedTimeout: Double {
        timeout.isFinite ? min(max(timeout, ProbeRunner.timeoutRange.lowerBound), ProbeRunner.timeoutRange.upperBound) : 5
    }

    /// Probes the record's library and compares what it reports with the record's manifest.
    public func probe(fd: Int32, record: PluginRecord) -> ProbeCache.Outcome {
        guard let manifest = record.manifest else { return .quarantined(.probeFailed("no manifest")) }
        let manifestPath = record.directory + "/manifest.json"
        let outcome = run(fd: fd, libraries: record.pinnedLibraryDescriptors, manifestPath: manifestPath,
                          displayPath: record.libraryPath ?? manifestPath)
        if case .passed(let report) = outcome, let mismatch = report.mismatch(with: manifest) { return .quarantined(mismatch) }
        return outcome
    }

    /// Probes a library that has no manifest yet: the report is what its code declares, from
    /// which `termhost plugins manifest` writes one.
    public func probeUndeclared(fd: Int32, libraryPath: String) -> ProbeCache.Outcome {
        run(fd: fd, libraries: [], manifestPath: nil, displayPath: libraryPath)
    }

    private func run(fd: Int32, libraries: [Int32], manifestPath: String?, displayPath: String) -> ProbeCache.Outcome {
        // Pinned libraries follow the report pipe, as descriptors 5, 6, ...
        let libraryFDs = libraries.indices.map { Int32(5 + $0) }
        let args = [executable, "--library-fd", "3", "--report-fd", "4"] + (manifestPath.map { ["--manifest", $0] } ?? [])
            + libraryFDs.flatMap { ["--pinned-library-fd", String($0)] } + ["--display-path", displayPath]
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { return .quarantined(.probeUnavailable("pipe: \(String(cString: strerror(errno)))")) }
        for p in pipeFDs { _ = fcntl(p, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fd, 3)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 4)
        for (from, to) in zip(libraries, libraryFDs) { posix_spawn_file_actions_adddup2(&actions, from, to) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // Its own process group, so that whatever a plugin started in it can be ended with it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        var pid: pid_t = 0
        let cArgs = args.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        // The Swift runtime's backtracer would turn a plugin's crash into pages of output and
        // seconds of delay; the probe only needs the signal.
        let env = ProcessInfo.processInfo.environment.filter { $0.key != "SWIFT_BACKTRACE" }
            .map { "\($0.key)=\($0.value)" } + ["SWIFT_BACKTRACE=enable=no"]
        let cEnv = env.map { strdup($0) } + [nil]
        defer { cEnv.forEach { free($0) } }
        let rc = posix_spawn(&pid, executable, &actions, &attributes, cArgs, cEnv)
        close(pipeFDs[1])
        guard rc == 0 else {
            close(pipeFDs[0])
            return .quarantined(.probeUnavailable("cannot start \(executable): \(String(cString: strerror(rc)))"))
        }
        let (output, status, ending) = collect(pipeFDs[0], pid: pid)
        close(pipeFDs[0])
        // Anything the plugin started in the probe's process group goes with it.
        kill(-pid, SIGKILL)

        let lines = output.split(separator: "\n").map(String.init)
        let stage = lines.last { $0.hasPrefix("stage ") }.map { String($0.dropFirst(6)) } ?? "starting the probe"
        if let line = lines.first(where: { $0.hasPrefix("forked ") }) {
            return .quarantined(.forkedInProbe(stage: String(line.dropFirst(7))))
        }
        switch ending {
        case .timedOut: return .quarantined(.probeTimedOut(seconds: boundedTimeout, stage: stage))
        case .leftProcesses: return .quarantined(.probeLeftProcesses(stage: stage))
        case .endOfFile: break
        }
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
        return .passed(report)
    }

    enum Ending { case endOfFile, timedOut, leftProcesses }

    /// Reads the report pipe until EOF, and reaps the child. Three ways it ends: EOF (every
    /// writer closed it) after the child exited; the deadline, when the child is killed; or the
    /// child exited but the pipe stays open for another half second: a process the plugin
    /// started holds it, and waiting for EOF would wait as long as that process lives.
    private func collect(_ fd: Int32, pid: pid_t) -> (String, Int32, Ending) {
        var data = [UInt8]()
        let deadline = Date().addingTimeInterval(boundedTimeout)
        var exited: Int32? = nil
        var graceEnd = Date.distantFuture
        var eof = false
        var buf = [UInt8](repeating: 0, count: 4096)
        func reap(block: Bool) -> Bool {
            var status: Int32 = 0
            while true {
                let r = waitpid(pid, &status, block ? 0 : WNOHANG)
                if r < 0 && errno == EINTR { continue }
                if r == pid { exited = status; return true }
                return false
            }
        }
        while true {
            if exited == nil && reap(block: false) { graceEnd = Date().addingTimeInterval(0.5) }
            if eof && exited != nil { return (String(decoding: data, as: UTF8.self), exited!, .endOfFile) }
            let now = Date()
            if exited == nil && now >= deadline {
                kill(pid, SIGKILL)
                _ = reap(block: true)
                return (String(decoding: data, as: UTF8.self), exited ?? 0, .timedOut)
            }
            if exited != nil && now >= graceEnd {
                return (String(decoding: data, as: UTF8.self), exited!, .leftProcesses)
            }
            if eof { _ = poll(nil, 0, 10); continue }   // the child closed the pipe; wait for it to exit
            let wait = min(exited == nil ? deadline.timeIntervalSince(now) : graceEnd.timeIntervalSince(now), 0.05)
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(max(wait, 0) * 1000) + 1)
            if ready <= 0 { continue }
            let n = read(fd, &buf, buf.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { eof = true; continue }
            if data.count < 1 << 20 { data += buf[0..<n] }
        }
    }
}
