import Foundation
import Glibc
import TermhostDaemon
import TermhostRuntime
import TermhostSDK

/// A plugin's command run in the daemon, when one runs (Docs/Daemon.md, "Commands in the
/// daemon"): this process passes its stdin, stdout and stderr to the daemon, which runs the
/// command in a scene of its own with them, so the command reads this terminal and writes to
/// it (or to the pipes and files the shell gave) as if it ran here. SIGINT, SIGTERM and SIGHUP
/// are passed on (the command is cancelled, as in the CLI); a window change too, and Ctrl-Z
/// for a command whose stdin is not a terminal (SIGTSTP, then SIGCONT: this client stops and
/// the command's scene is marked in background; one reading the terminal is not suspended,
/// and the user is told why). The exit status
/// is the command's; 128 + N when signal N ended it, as in the CLI.
///
/// Without a daemon, with `--in-process`, or when the daemon does not know the command (its
/// plugins differ from this process's), nil: the caller runs it here, as before.
enum RemoteCommand {
    /// `refused` hears why the daemon would not run it, when it would not (nil is returned);
    /// with `refused` given, a failed request is said there too, not announced as "running it
    /// here" (DaemonRerun: the command cannot run here).
    static func run(_ argv: [String], _ g: GlobalOptions, refused: ((String) -> Void)? = nil) -> Int32? {
        guard !g.inProcess else { return nil }
        let client: DaemonClient
        do { client = try DaemonClient(DaemonAddress.standard(), client: "termhost \(TermhostVersion.string) \(argv[0])") } catch {
            // No daemon (the usual case) is silent; a daemon that is there but will not talk is said.
            if !error.notRunning { Output.err("termhost: warning: \(error.description); running '\(VisibleText.of(argv[0]))' here") }
            return nil
        }
        let interactive = !g.nonInteractive && isatty(0) == 1 && isatty(2) == 1
        // Caught before the request: a Ctrl-C from the moment the command may start is passed on.
        let signals = SignalPipe([SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP, SIGCONT])
        defer { signals.restoreDefaults() }
        // The terminal as it was: however the command left it (raw, echo off at a prompt), and
        // however this client ends (a second Ctrl-C), the shell gets it back like this.
        var saved = termios()
        let restore = isatty(0) == 1 && tcgetattr(0, &saved) == 0
        defer { if restore { tcsetattr(0, TCSADRAIN, &saved) } }
        let reply: [String: Any]
        do {
            // The command reads this shell's variables (TERM, SSH_AUTH_SOCK...), not the daemon's.
            // PWD is this process's real working directory (a shell's may be stale, or absent):
            // plugins resolve relative paths against it (PluginHost.workingDirectory).
            var mine = ProcessInfo.processInfo.environment
            mine["PWD"] = FileManager.default.currentDirectoryPath
            let environment = ClientEnvironment.outgoing(mine)
            if !environment.left.isEmpty {
                Output.err("termhost: warning: the environment is over \(ClientEnvironment.maximumBytes / 1024) KiB; the daemon's command does not see \(environment.left.joined(separator: ", "))")
            }
            reply = try client.request(["op": "run", "argv": argv, "json": g.json, "interactive": interactive,
                                        "environment": environment.variables], passing: [0, 1, 2])
        } catch {
            if let refused { refused(error.description) } else {
                Output.err("termhost: warning: the daemon did not run '\(VisibleText.of(argv[0]))' (\(error.description)); running it here")
            }
            return nil
        }
        // {"unknown": true}: no feature in the daemon has it (its plugins are not this process's).
        guard reply["running"] as? Bool == true else {
            refused?((reply["reason"] as? String) ?? (reply["error"] as? String) ?? "no reason given")
            return nil
        }
        var ending: Int32? = nil
        while true {
            if let buffered = client.receiveFrame(bufferedOnly: true) {
                if let status = finished(buffered) { return ending.map(ExitCode.signal) ?? status }
                continue
            }
            var fds = [pollfd(fd: client.descriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: signals.readEnd, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 2, -1) < 0 && errno != EINTR { break }
            if fds[1].revents != 0 {
                for s in signals.take() {
                    if s == SIGWINCH {
                        _ = client.send(.resize, DaemonProtocol.payload([:]))
                    } else if s == SIGTSTP && isatty(0) == 1 {
                        // The command reads this terminal from the daemon, where no stop reaches
                        // it: stopped, this client would leave it taking the shell's keystrokes.
                        Output.err("\r\ntermhost: Ctrl-Z cannot suspend '\(VisibleText.of(argv[0]))': it runs in the daemon and would go on reading this terminal; Ctrl-C stops it, and 'termhost --in-process \(VisibleText.of(argv[0])) ...' runs it here, where Ctrl-Z works")
                    } else if s == SIGTSTP || s == SIGCONT {
                        // Job control for a command that does not read the terminal: this client
                        // really stops (the shell sees a stopped job) and the command's scene is
                        // marked in background in the daemon (its status counts it); continued,
                        // active again. The command itself runs on: a thread cannot be stopped.
                        _ = client.send(.signal, DaemonProtocol.payload(["signal": Int(s)]))
                        if s == SIGTSTP { kill(getpid(), SIGSTOP) }
                    } else if ending != nil {
                        // A second one ends this client at once, as in the CLI; the daemon
                        // cancels the command when the connection closes.
                        return ExitCode.signal(s)
                    } else {
                        ending = s
                        _ = client.send(.signal, DaemonProtocol.payload(["signal": Int(s)]))
                    }
                }
            }
            if fds[0].revents != 0, let incoming = client.receiveFrame() {
                if let status = finished(incoming) { return ending.map(ExitCode.signal) ?? status }
            }
        }
        Output.err("termhost: the daemon went away while running '\(VisibleText.of(argv[0]))'")
        return ExitCode.failure
    }

    /// The command's status from its last frame; -1 for a connection that ended without one;
    /// nil for any other frame.
    private static func finished(_ incoming: DaemonClient.Incoming) -> Int32? {
        switch incoming {
        case .closed, .failed:
            Output.err("termhost: the daemon went away before the command finished")
            return ExitCode.failure
        case .frame(let type, let payload):
            guard type == DaemonMessage.exited.rawValue else { return nil }
            let o = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any] ?? [:]
            return (o["status"] as? NSNumber).map { Int32(clamping: $0.intValue) } ?? ExitCode.failure
        }
    }
}
