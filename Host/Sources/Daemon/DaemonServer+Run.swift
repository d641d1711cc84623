import Foundation
import Glibc
import Synchronization
import TermhostSDK

/// `run`: a command of the CLI runs in the daemon, in a scene of its own whose streams are the
/// client's stdin, stdout and stderr, passed with the request (SCM_RIGHTS), and whose
/// environment (for termhost.environment/1) is the one the request carries. The reply comes at
/// once ({"running": true, "scene": N}, or {"unknown": true, "reason"} for a command no feature
/// in the daemon contributes, or whose plugin runs another command now: the client then runs it
/// itself); `exited` ({"status": N}) comes when it
/// ends. Meanwhile the client may send `signal` (SIGHUP, SIGINT, SIGTERM: the command is
/// cancelled, as SIGINT cancels it in the CLI; SIGTSTP, SIGCONT: its scene goes to background
/// and back, as Ctrl-Z and `fg` move the CLI's) and `resize` (the daemon raises SIGWINCH, and
/// every terminal feature re-reads the size of its own terminal). A client that goes away
/// cancels its command.
extension DaemonServer {
    static let maxArguments = 4096

    /// Returns a reply when the command did not start (the connection stays in request mode),
    /// or nil once it ran to its end on this connection.
    func runCommand(_ fields: [String: Any], _ connection: inout DaemonConnection, _ name: String) -> [String: Any]? {
        let descriptors = connection.takeDescriptors()
        func refuse(_ reply: [String: Any]) -> [String: Any] {
            for d in descriptors { close(d) }
            return reply
        }
        guard let runner else { return refuse(["error": "this daemon runs no commands"]) }
        guard let argv = fields["argv"] as? [String], !argv.isEmpty, argv.count <= DaemonServer.maxArguments else {
            return refuse(["error": "run needs \"argv\": the command and its arguments (1 to \(DaemonServer.maxArguments) strings)"])
        }
        let environment: [String: String]?
        switch ClientEnvironment.incoming(fields) {
        case .success(let e): environment = e
        case .failure(let problem): return refuse(["error": "run: \(problem)"])
        }
        guard descriptors.count == 3 else {
            return refuse(["error": "run needs the client's stdin, stdout and stderr passed with the request (SCM_RIGHTS), \(descriptors.count) came"])
        }
        let release: @Sendable () -> Void
        switch runner.admit(argv[0]) {
        case .refused(let why): return refuse(["unknown": true, "reason": why])
        case .admitted(let r): release = r
        }
        let request = CommandRunner.Request(argv: argv, json: (fields["json"] as? Bool) ?? false,
                                            interactive: (fields["interactive"] as? Bool) ?? false,
                                            streams: CommandRunner.Streams(input: descriptors[0], output: descriptors[1], error: descriptors[2]),
                                            environment: environment)

        struct Progress { var scene: UInt64? = nil; var cancelled = false; var status: Int32? = nil; var unanswered = false }
        let progress = Mutex(Progress())
        let started = DispatchSemaphore(value: 0)
        // The reply goes before the command runs, and so before `exited`: a client whose
        // connection closes before the reply (the daemon crashed) knows that its command never
        // ran, and may run it itself without running it twice.
        let replied = DispatchSemaphore(value: 0)
        // The command's thread says the end on a descriptor of its own: this thread may return
        // (and close the connection's) once the client is gone, without waiting for a command
        // that ignores its cancellation, and no number it writes to is ever another client's.
        let fd = fcntl(connection.fd, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else {
            release()
            return refuse(["error": "the daemon is out of descriptors"])
        }
        let log = self.log
        let thread = Thread {
            let status = runner.run(request) { scene in
                progress.withLock { $0.scene = scene }
                started.signal()
                replied.wait()
                replied.signal()   // passed on: the wait below finds it too
                // Read after the reply: a client that never got it must not have its command
                // run (it may run it itself), and one that went away meanwhile cancels it.
                let (unanswered, cancelled) = progress.withLock { ($0.unanswered, $0.cancelled) }
                if cancelled { runner.cancel(scene) }
                return !unanswered
            }
            for d in descriptors { close(d) }
            release()
            started.signal()   // in case the command never got as far as a scene
            replied.wait()
            progress.withLock { $0.status = status }
            // The last frame; then the reader below is woken by its side of the socket ending.
            if !DaemonConnection(fd: fd).send(DaemonFrame(type: DaemonMessage.exited.rawValue, payload: DaemonProtocol.payload(["status": Int(status)]))) {
                log("\(name): did not take the status of '\(VisibleText.of(argv[0]))'")
            }
            _ = Glibc.shutdown(fd, Int32(SHUT_RD))
            close(fd)
        }
        thread.name = "termhost-daemon-command"
        thread.start()
        started.wait()
        let scene = progress.withLock { $0.scene }
        let sent = send(connection, .reply, ["running": true, "scene": Int(scene ?? 0)], name)
        if !sent { progress.withLock { $0.unanswered = true } }
        replied.signal()
        guard sent else {
            if let scene { runner.cancel(scene) }
            return nil
        }
        log("\(name) runs '\(VisibleText.of(argv[0]))' in scene \(scene ?? 0)")

        func cancel(_ why: String) {
            let scene = progress.withLock { p -> UInt64? in
                p.cancelled = true
                return p.status == nil ? p.scene : nil
            }
            if let scene {
                log("\(name): \(why): cancelling its command in scene \(scene)")
                runner.cancel(scene)
            }
        }
        while true {
            let got = receive(&connection, name)
            connection.closeDescriptors()
            guard case .frame(let frame) = got else {
                if progress.withLock({ $0.status == nil }) { cancel("the client went away") }
                break
            }
            switch DaemonMessage(rawValue: frame.type) {
            case .signal?:
                guard case .success(let o) = DaemonProtocol.object(frame.payload),
                      case .success(let signal) = DaemonProtocol.integer(o, "signal", 1...64),
                      [SIGHUP, SIGINT, SIGTERM, SIGTSTP, SIGCONT].contains(Int32(signal)) else {
                    log("\(name): a signal frame that is not SIGHUP, SIGINT, SIGTERM, SIGTSTP or SIGCONT: ignored")
                    continue
                }
                if Int32(signal) == SIGTSTP || Int32(signal) == SIGCONT {
                    let stopped = Int32(signal) == SIGTSTP
                    if let scene = progress.withLock({ $0.status == nil ? $0.scene : nil }) {
                        log("\(name): the client \(stopped ? "stopped (SIGTSTP): scene \(scene) in background" : "continued (SIGCONT): scene \(scene) active")")
                        runner.setBackground(scene, stopped)
                    }
                    continue
                }
                cancel("the client got signal \(signal)")
            case .resize?:
                // Features watch SIGWINCH and read their own terminal's size (the client's,
                // through the passed descriptor): the daemon raises it for them.
                _ = kill(getpid(), SIGWINCH)
            default:
                log("\(name): skipped a frame of type \(frame.type) while a command runs")
            }
        }
        // The command's thread has sent its last frame, or the client is gone and the command
        // was asked to stop: either way the connection is done (the thread has its own descriptor).
        return nil
    }
}
