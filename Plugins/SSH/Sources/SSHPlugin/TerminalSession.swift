import CLibSSH2
import LibSSH2
import Glibc
import Synchronization
import TermhostSDK

/// `termhost ssh HOST`: an interactive shell on a PTY, like `ssh HOST`; with `-t`, a command on
/// one (`ssh -t HOST sudo -i`). The local terminal is put in raw mode and restored on every exit
/// path; window changes follow SIGWINCH (the latest size wins; a failed resize is logged, never
/// fatal); bytes pass through untouched (UTF-8, binary) except OpenSSH's escapes after a
/// newline: `~.` disconnects, `~?` lists the escapes, `~~` sends one `~`.
struct TerminalSession {
    let connection: SSHConnection
    let log: (String) -> Void
    /// Called with each command the remote shell reports (shell integration).
    var onCommand: (String) -> Void = { _ in }
    /// The command to run instead of the login shell (`-t`).
    var command: String? = nil
    var terminal: RemoteCommandArguments.Terminal = .auto
    /// SendEnv and SetEnv's variables, sent before the shell or command.
    var environment: [RemoteEnvironment.Variable] = []

    /// Whether to ask for a remote terminal, and the line ssh prints when one was wanted and
    /// stdin is no terminal (OpenSSH's rules for -t, -tt and -T).
    static func allocates(_ terminal: RemoteCommandArguments.Terminal, command: String?, stdinIsTerminal: Bool) -> (Bool, warning: String?) {
        let warning = "Pseudo-terminal will not be allocated because stdin is not a terminal.\n"
        switch terminal {
        case .never: return (false, nil)
        case .force(twice: true): return (true, nil)
        case .force(twice: false): return stdinIsTerminal ? (true, nil) : (false, warning)
        case .auto:
            if command != nil { return (false, nil) }
            return stdinIsTerminal ? (true, nil) : (false, warning)
        }
    }

    /// `agentWarning` gets the one-line warning when agent forwarding was wanted and is not set up.
    func run(stdin: Int32, stdout: Int32, stderr: Int32, agentWarning: (String) -> Void) throws(SSHError) -> Int32 {
        let channel = try connection.openSessionChannel()
        defer { libssh2_channel_free(channel) }
        let (allocate, warning) = TerminalSession.allocates(terminal, command: command, stdinIsTerminal: isatty(stdin) == 1)
        // Raw mode, window changes and escapes only with a terminal at both ends.
        let interactive = allocate && isatty(stdin) == 1
        if allocate {
            let size = TerminalSession.windowSize(stdin)
            let term = connection.sessionContext.interaction.variable("TERM") ?? "xterm-256color"
            guard libssh2_channel_request_pty_ex(channel, term, UInt32(term.utf8.count), nil, 0,
                                                 Int32(size.columns), Int32(size.rows), 0, 0) == 0 else {
                throw SSHError("ssh: the server refused a terminal: \(connection.lastError())")
            }
        } else if let warning {
            writeAll(stderr, warning)
        }
        let agent = AgentForwarding.start(on: channel, connection: connection, warn: agentWarning)
        try RemoteEnvironment.send(environment, on: channel, connection: connection)
        if let command {
            guard libssh2_channel_process_startup(channel, "exec", 4, command, UInt32(command.utf8.count)) == 0 else {
                throw SSHError("ssh: the server refused to run the command: \(connection.lastError())")
            }
        } else {
            guard libssh2_channel_process_startup(channel, "shell", 5, nil, 0) == 0 else {
                throw SSHError("ssh: the server refused a shell: \(connection.lastError())")
            }
        }

        var escapes = EscapeFilter.make()
        var disconnected = false
        var pump = ChannelPump(connection: connection, channel: channel)
        pump.agent = agent
        if interactive {
            RawMode.enter(stdin)
            WindowChange.install()
            var seenChanges = WindowChange.count
            pump.filterInput = { bytes in
                let (send, action) = escapes.filter(bytes)
                switch action {
                case .help?: writeAll(stderr, EscapeFilter.help)
                case .disconnect?:
                    disconnected = true
                    return (send, true)
                case nil: break
                }
                return (send, false)
            }
            var pendingResize = false
            pump.onPass = { channel in
                if WindowChange.count != seenChanges {
                    seenChanges = WindowChange.count
                    pendingResize = true
                }
                guard pendingResize else { return }
                let size = TerminalSession.windowSize(stdin)
                let rc = libssh2_channel_request_pty_size_ex(channel, Int32(size.columns), Int32(size.rows), 0, 0)
                if LibSSH2.wouldBlock(rc) { return }   // same request again on the next pass
                pendingResize = false
                if rc != 0 { log("window change to \(size.columns)x\(size.rows) failed: \(connection.lastError())") }
            }
        }
        defer { if interactive { RawMode.leave(stdin) } }
        var integration = ShellIntegration()
        let status: Int32
        do {
            status = try pump.run(input: .descriptor(stdin)) { stream, data in
                writeAll(stream == 0 ? stdout : stderr, data.baseAddress!, data.count)
                if stream == 0 { for command in integration.scan(data) { onCommand(command) } }
            }
        } catch {
            if interactive { RawMode.leave(stdin) }
            throw SSHError("\r\n" + error.message, status: 255)
        }
        if disconnected {
            RawMode.leave(stdin)
            writeAll(stderr, "\nConnection to \(connection.shownAddress) closed.\n")
        }
        return status
    }

    static func windowSize(_ fd: Int32) -> (columns: Int, rows: Int) {
        var ws = winsize()
        if ioctl(fd, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_col > 0, ws.ws_row > 0 { return (Int(ws.ws_col), Int(ws.ws_row)) }
        return (80, 24)
    }
}

/// OpenSSH's escapes for `termhost ssh` (TerminalEscapes): `~.` disconnects, `~?` lists them.
enum EscapeFilter {
    enum Action: Sendable { case help, disconnect }

    static func make() -> TerminalEscapes<Action> {
        TerminalEscapes([".": .init(.disconnect, ends: true), "?": .init(.help, ends: false)])
    }

    static let help = """
    \r\nSupported escape sequences:\r
     ~.   - terminate connection\r
     ~?   - this message\r
     ~~   - send the escape character by typing it twice\r
    (Note that escapes are only recognized immediately after newline.)\r\n
    """
}

/// Local terminals' raw mode, restorable from anywhere (including the plugin's shutdown, which
/// runs when the CLI gets SIGTERM or SIGHUP). Kept per descriptor: in the daemon, several
/// sessions run at once, each on the terminal its client passed.
enum RawMode {
    private static let saved = Mutex<[Int32: termios]>([:])

    static func enter(_ descriptor: Int32) {
        var t = termios()
        guard tcgetattr(descriptor, &t) == 0 else { return }
        saved.withLock { $0[descriptor] = t }
        cfmakeraw(&t)
        tcsetattr(descriptor, TCSADRAIN, &t)
    }

    /// Restores one terminal.
    static func leave(_ descriptor: Int32) {
        guard var t = saved.withLock({ $0.removeValue(forKey: descriptor) }) else { return }
        tcsetattr(descriptor, TCSADRAIN, &t)
    }

    /// Restores every terminal still raw (shutdown).
    static func leaveAll() {
        let all: [Int32: termios] = saved.withLock { s in
            let copy = s
            s = [:]
            return copy
        }
        for (fd, original) in all {
            var t = original
            tcsetattr(fd, TCSADRAIN, &t)
        }
    }
}

/// SIGWINCH counts up a number that each session's pump compares with the last it saw on its
/// next pass (at most 100 ms later), so every session in the process hears of it (in the
/// daemon a client's window change arrives as SIGWINCH too), and each reads its own terminal.
enum WindowChange {
    /// Lock-free, so the signal handler may touch it (async-signal-safe) while pumps read it.
    private static let changes = Atomic<Int>(0)

    static func install() {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in WindowChange.changes.add(1, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGWINCH, &action, nil)
    }

    static var count: Int { changes.load(ordering: .relaxed) }
}
