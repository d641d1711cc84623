import Foundation

/// Runs a program to completion and captures its output.
public enum Shell {
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
        /// True when the process was ended by a signal (status is then the signal number).
        public let signaled: Bool
        public var output: String { stdout + stderr }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    @discardableResult
    public static func run(_ executable: String, _ args: [String], environment: [String: String]? = nil,
                           stdin: String? = nil, timeout: Double = 60, currentDirectory: String? = nil) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = args
        if let environment { p.environment = environment }
        if let currentDirectory { p.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        let out = Pipe(), err = Pipe(), input = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try p.run()
        // Read both pipes concurrently so a chatty child cannot block on a full pipe.
        final class Box: @unchecked Sendable { var data = Data() }
        let outBox = Box(), errBox = Box()
        let group = DispatchGroup()
        for (handle, box) in [(out.fileHandleForReading, outBox), (err.fileHandleForReading, errBox)] {
            group.enter()
            DispatchQueue.global().async {
                box.data = handle.readDataToEndOfFile()
                group.leave()
            }
        }
        // stdin is written beside the readers (a child that echoes it would otherwise fill its
        // stdout pipe and stop reading), and a child that exits before reading it all must
        // fail its test, not end the test process with SIGPIPE.
        // A thread of its own: a blocked write must not hold one of the few dispatch workers.
        if let stdin {
            let writer = input.fileHandleForWriting
            group.enter()
            Thread {
                writeAllWithoutSIGPIPE(writer.fileDescriptor, Array(stdin.utf8))
                try? writer.close()
                group.leave()
            }.start()
        }
        Wait.until(timeout: timeout, poll: 0.01) { !p.isRunning }
        if p.isRunning {
            p.terminate()
            p.waitUntilExit()
            throw Failure(description: "\(executable) \(args.joined(separator: " ")) did not finish within \(timeout) s")
        }
        p.waitUntilExit()
        // The pipes end with the child unless something it started kept them open.
        guard group.wait(timeout: .now() + 30) == .success else {
            throw Failure(description: "\(executable) \(args.joined(separator: " ")) exited, but its stdout, stderr or stdin stayed open for 30 s (kept by a process it started?)")
        }
        return Result(status: p.terminationStatus, stdout: String(decoding: outBox.data, as: UTF8.self),
                      stderr: String(decoding: errBox.data, as: UTF8.self),
                      signaled: p.terminationReason == .uncaughtSignal)
    }

    /// Writes `bytes` to a pipe until done or the reader is gone. The SIGPIPE of a closed pipe
    /// goes to the writing thread: it is blocked here and taken back, so the write fails with
    /// EPIPE instead of ending the test process. Ignoring SIGPIPE process-wide would not do:
    /// children inherit an ignored signal.
    static func writeAllWithoutSIGPIPE(_ fd: Int32, _ bytes: [UInt8]) {
        var pipeSignal = sigset_t(), previous = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n > 0 { offset += n; continue }
            guard n < 0 else { return }
            if errno == EINTR { continue }
            if errno == EPIPE {
                var none = timespec(tv_sec: 0, tv_nsec: 0)
                _ = sigtimedwait(&pipeSignal, nil, &none)
            }
            return
        }
    }

    /// Runs a program with all three streams on /dev/null and waits for it; returns its exit
    /// status. For programs that leave a daemon behind (tmux), where captured pipes would never
    /// close.
    public static func spawnDetachedOutput(_ executable: String, _ args: [String]) -> Int32 {
        let pid = spawnBackground(executable, args)
        guard pid > 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status >> 8) & 0xff
    }

    /// Starts a long-running program (its streams on /dev/null) and returns its pid; the
    /// caller stops it with kill + waitpid (`stopBackground`).
    public static func spawnBackground(_ executable: String, _ args: [String]) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        guard closeInheritedDescriptors(&actions) else { return -1 }
        let argv = ([executable] + args).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else { return -1 }
        return pid
    }

    /// Adds to `actions` the closing of every descriptor above stderr. Test servers and
    /// daemons (sshd, Dropbear, PostgreSQL, tmux) outlive the moment they were started, and one
    /// that kept the write end of another test's pipe (the test process's descriptors are not
    /// close-on-exec) would keep that pipe's reader from ever seeing EOF: a test waiting on it
    /// hung. Uses glibc 2.34's closefrom action, looked up through RTLD_DEFAULT because Swift's
    /// Glibc module does not import it; false if it is missing.
    public static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) -> Bool {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return false }
        return unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3) == 0
    }

    /// Kills it (SIGKILL: ssh-agent -D, for one, does not stop on SIGTERM) with every process
    /// it started, then reaps it.
    public static func stopBackground(_ pid: pid_t) {
        guard pid > 0 else { return }
        ProcessTree.kill(pid)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

}

/// A program started in the background with stdout and stderr on pipes, for tests that act on
/// it while it runs (signals, frozen servers). stdin is /dev/null unless given.
public struct Background: @unchecked Sendable {
    public let process: Process
    public let stdout = Pipe()
    public let stderr = Pipe()

    public init(_ executable: String, _ args: [String], environment: [String: String], stdin: FileHandle? = nil) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = args
        process.environment = environment
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin ?? FileHandle.nullDevice
        try process.run()
    }

    /// The first line the program prints (waits for it).
    public func firstLine() -> String { stdout.fileHandleForReading.availableDataOrLine() }
    /// Everything it wrote to stderr (waits for the end).
    public func errorOutput() -> String { String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
}

extension FileHandle {
    /// Reads until a newline arrives (a child's first line).
    public func availableDataOrLine() -> String {
        var data = Data()
        while !data.contains(UInt8(ascii: "\n")) {
            let chunk = availableData
            if chunk.isEmpty { break }
            data.append(chunk)
        }
        return String(decoding: data, as: UTF8.self)
    }
}
