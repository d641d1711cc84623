import CTermhost

/// Channels bridged to local sockets (transport.h: open_direct_tcpip, open_shell, resize_shell,
/// open_exec). Each call returns the caller's end of a local stream socket: read and write it
/// like a TCP connection, `shutdown(fd, SHUT_WR)` sends end-of-file, `close(fd)` closes the
/// channel. The SSH plugin moves the bytes on the connection's executor, with flow control.
extension SSHTransport {
    /// Whether the SSH plugin offers `open_exec` (ABI 1.1). [any-thread]
    public var offersOpenExec: Bool { TermhostStruct.member(vtable, \.open_exec) != nil }
}

extension SSHTransport.Connection {
    /// `open_direct_tcpip`: a channel to host:port as the server sees it (like `ssh -L`),
    /// bridged to the returned local socket, which the caller owns. [any-thread]
    public func openDirectTCPIP(host: String, port: Int32) throws(PluginError) -> Int32 {
        var fd: Int32 = -1
        try check { vtable.pointee.open_direct_tcpip(handle, host, port, &fd, $0) }
        return fd
    }

    /// `open_shell`: a shell on a PTY of `term` (e.g. "xterm-256color"), columns x rows,
    /// bridged to the returned local socket, which the caller owns. [any-thread]
    public func openShell(term: String, columns: Int32, rows: Int32) throws(PluginError) -> Int32 {
        var fd: Int32 = -1
        try check { vtable.pointee.open_shell(handle, term, columns, rows, &fd, $0) }
        return fd
    }

    /// `resize_shell`: changes the PTY size of the shell whose local end is `fd`. A failure is
    /// reported, never fatal to the shell. [any-thread]
    public func resizeShell(_ fd: Int32, columns: Int32, rows: Int32) throws(PluginError) {
        try check { vtable.pointee.resize_shell(handle, fd, columns, rows, $0) }
    }

    /// `open_exec` (ABI 1.1): runs `command` on a channel bridged to the returned local socket:
    /// its stdout arrives there, bytes written go to its stdin. stderr is discarded and the exit
    /// status is not reported (end the output with a marker of your own). For long-lived
    /// commands, where `exec` would run until the command ends. Against an older SSH plugin,
    /// TERMHOST_ERR_UNSUPPORTED. [any-thread]
    public func openExec(_ command: String) throws(PluginError) -> Int32 {
        guard let openExec = TermhostStruct.member(vtable, \.open_exec) else {
            throw PluginError("ssh: the SSH plugin predates ABI 1.1: it cannot run a command on a bridged channel (open_exec)",
                              code: Int32(TERMHOST_ERR_UNSUPPORTED))
        }
        var fd: Int32 = -1
        try check { openExec(handle, command, &fd, $0) }
        return fd
    }
}
