import CLibSSH2
import Glibc
import LibSSH2

/// The remote end of a persistent session, started on a connection: a PTY, agent forwarding
/// when asked, and either a login shell or, for `--remote-tmux`, `tmux new-session -A -s
/// termhost-ID`, which creates the remote tmux session the first time and attaches the same one
/// after a reconnect (or after the daemon itself was restarted): the shell, its jobs and its
/// scrollback live in the remote tmux server, not in the connection.
struct SessionShell {
    let channel: OpaquePointer
    let agent: AgentForwarding?
    /// Whether the shell runs inside remote tmux (false: asked for, but tmux is not there).
    let inTmux: Bool

    static func tmuxSession(_ id: String) -> String { "termhost-\(id)" }

    /// Starts it; blocking. On failure nothing is left open on the connection.
    static func start(on connection: SSHConnection, id: String, term: String, columns: Int, rows: Int,
                      remoteTmux: Bool, log: (String) -> Void) throws(SSHError) -> SessionShell {
        // Asked first on a channel of its own: a missing tmux is said, not left to a shell error.
        let inTmux = remoteTmux ? try hasTmux(connection) : false
        let channel = try connection.openSessionChannel()
        guard libssh2_channel_request_pty_ex(channel, term, UInt32(term.utf8.count), nil, 0,
                                             Int32(columns), Int32(rows), 0, 0) == 0 else {
            libssh2_channel_free(channel)
            throw SSHError("ssh: the server refused a terminal: \(connection.lastError())")
        }
        let agent = AgentForwarding.start(on: channel, connection: connection, warn: log)
        let started: Int32
        if inTmux {
            let command = "exec tmux new-session -A -s \(tmuxSession(id))"
            started = libssh2_channel_process_startup(channel, "exec", 4, command, UInt32(command.utf8.count))
        } else {
            started = libssh2_channel_process_startup(channel, "shell", 5, nil, 0)
        }
        guard started == 0 else {
            libssh2_channel_free(channel)
            throw SSHError("ssh: the server refused a shell: \(connection.lastError())")
        }
        return SessionShell(channel: channel, agent: agent, inTmux: inTmux)
    }

    /// Whether `tmux` is on the remote's PATH (for the account's non-interactive shell).
    private static func hasTmux(_ connection: SSHConnection) throws(SSHError) -> Bool {
        try ExecChannel(connection: connection).run("command -v tmux >/dev/null 2>&1", input: []) { _, _ in } == 0
    }
}
