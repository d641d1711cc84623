import Foundation
import Glibc
import TermhostDaemon
import TermhostSDK

/// `termhost attach`: this terminal becomes one client of a persistent session in the daemon.
/// The terminal is put in raw mode and restored on every way out; on a terminal it is passed
/// to the daemon, which reads the keys and writes the output itself (elsewhere, this process
/// relays them); the window size follows SIGWINCH (the latest client to resize wins). Escapes
/// after a newline, in ssh's grammar: `~d` or `~.` detach (the session goes on), `~?` lists
/// them, `~~` sends one `~`. Ends with the shell's exit status when the session ends, 0 when
/// this client detached, 255 when the daemon went away.
enum AttachClient {
    static func run(_ client: DaemonClient, session: String) -> Int32 {
        let interactive = isatty(0) == 1
        // A terminal is passed to the daemon, which then reads its keys and writes the session's
        // output to it directly: this process only waits, and passes on window changes.
        let passTerminal = interactive && isatty(1) == 1
        var request: [String: Any] = ["op": "attach", "session": session, "terminal": passTerminal]
        if interactive, let size = windowSize() { request["columns"] = size.columns; request["rows"] = size.rows }
        // Raw before the daemon writes the replay to the terminal.
        if interactive { Terminal.enterRaw() }
        do { _ = try client.request(request, passing: passTerminal ? [0, 1] : []) } catch {
            if interactive { Terminal.leave() }
            Output.err("termhost attach: \(error.description)")
            return ExitCode.failure
        }
        let signals = SignalPipe([SIGWINCH, SIGTERM, SIGHUP, SIGINT])
        var escapes = DetachEscape.filter()
        var stdinOpen = true
        var exitStatus: Int32? = nil
        var reason: String? = nil   // the daemon's, from its last frame
        var detached = false
        /// Handles one frame; false when the attachment is over.
        func handle(_ incoming: DaemonClient.Incoming) -> Bool {
            switch incoming {
            case .closed: return false
            case .failed: return false
            case .frame(let type, let payload):
                switch DaemonMessage(rawValue: type) {
                case .output?:
                    payload.withUnsafeBytes { Output.raw(1, $0) }
                case .event?:
                    let o = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any] ?? [:]
                    if o["kind"] as? String == "exit" { exitStatus = (o["status"] as? NSNumber).map { Int32(clamping: $0.intValue) } ?? 255 }
                case .detached?:
                    let o = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any] ?? [:]
                    reason = o["reason"] as? String ?? "detached"
                    return false
                default: break   // a newer daemon's frame: skipped
                }
                return true
            }
        }

        loop: while true {
            var fds = [pollfd(fd: client.descriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: signals.readEnd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: stdinOpen && !passTerminal ? 0 : -1, events: Int16(POLLIN), revents: 0)]
            // Frames already read come first: one read may have brought several.
            if let buffered = client.receiveFrame(bufferedOnly: true) {
                if handle(buffered) { continue } else { break loop }
            }
            if poll(&fds, nfds_t(fds.count), -1) < 0 && errno != EINTR { break }
            if fds[1].revents != 0 {
                for s in signals.take() {
                    if s == SIGWINCH, let size = windowSize() {
                        _ = client.send(.resize, DaemonProtocol.payload(["columns": size.columns, "rows": size.rows]))
                    } else if s != SIGWINCH {
                        // Terminal gone or asked to end: detach; the session goes on.
                        _ = client.send(.detach, [])
                        detached = true
                    }
                }
            }
            if !passTerminal && fds[2].revents != 0 {
                var buffer = [UInt8](repeating: 0, count: 16 * 1024)
                let n = read(0, &buffer, buffer.count)
                if n > 0 {
                    let (send, action) = interactive ? escapes.filter(Array(buffer[0..<n])) : (Array(buffer[0..<n]), nil)
                    if !send.isEmpty { _ = client.send(.input, send) }
                    switch action {
                    case .help?: Output.raw(2, DetachEscape.help)
                    case .detach?:
                        _ = client.send(.detach, [])
                        detached = true
                    case nil: break
                    }
                } else if n == 0 || errno != EINTR {
                    stdinOpen = false
                }
            }
            if fds[0].revents != 0, let incoming = client.receiveFrame() {
                if handle(incoming) == false { break loop }
            }
        }

        if interactive { Terminal.leave() }
        guard let reason else {
            // No last word: the daemon stopped or crashed. A remote tmux session lives on and
            // is listed again by the next daemon.
            Output.err("[the daemon went away; 'termhost sessions' lists what a new one finds again ('ssh --persist --remote-tmux' sessions), 'termhost attach \(session)' returns]")
            return 255
        }
        if let exitStatus {
            Output.err("[session \(session) ended: \(VisibleText.of(reason))]")
            return exitStatus
        }
        if detached || reason == "detached" {
            Output.err("[detached from session \(session); 'termhost attach \(session)' returns to it]")
            return ExitCode.success
        }
        Output.err("[detached from session \(session): \(VisibleText.of(reason))]")
        return ExitCode.failure
    }

    static func windowSize() -> (columns: Int, rows: Int)? {
        var ws = winsize()
        guard ioctl(0, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_col > 0, ws.ws_row > 0 else { return nil }
        return (Int(ws.ws_col), Int(ws.ws_row))
    }

    /// The local terminal's raw mode; restored by `leave`.
    enum Terminal {
        nonisolated(unsafe) private static var saved: termios? = nil

        static func enterRaw() {
            var t = termios()
            guard tcgetattr(0, &t) == 0 else { return }
            saved = t
            cfmakeraw(&t)
            tcsetattr(0, TCSADRAIN, &t)
        }

        static func leave() {
            guard var t = saved else { return }
            tcsetattr(0, TCSADRAIN, &t)
            saved = nil
        }
    }
}

/// Signals turned into bytes on a pipe, so one poll() waits for the terminal, the daemon and
/// them alike (a handler only writes the signal's number: async-signal-safe).
final class SignalPipe {
    nonisolated(unsafe) private static var writeEnd: Int32 = -1
    let readEnd: Int32
    private let signals: [Int32]

    init(_ signals: [Int32]) {
        self.signals = signals
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        readEnd = fds[0]
        SignalPipe.writeEnd = fds[1]
        // Whatever started this process may have left them blocked (a thread of a dispatch
        // pool blocks them, and a child inherits its mask): a blocked signal would wait forever.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for s in signals { sigaddset(&unblock, s) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        for s in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { sig in
                var b = UInt8(truncatingIfNeeded: sig)
                _ = write(SignalPipe.writeEnd, &b, 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(s, &action, nil)
        }
    }

    /// Puts the signals back to their default action.
    func restoreDefaults() {
        for s in signals { signal(s, SIG_DFL) }
    }

    /// The signals that arrived since the last call.
    func take() -> [Int32] {
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = read(readEnd, &buffer, buffer.count)
        return n > 0 ? buffer[0..<n].map { Int32($0) } : []
    }
}
