import CLibSSH2
import LibSSH2
import Glibc
import TermhostSDK

/// Runs one remote command on an exec channel, stdout and stderr kept apart; returns its exit
/// status.
struct ExecChannel {
    let connection: SSHConnection

    /// `agentWarning` gets the one-line warning when agent forwarding was wanted and is not set up.
    /// `environment`: SendEnv and SetEnv's variables, sent before the command.
    func run(_ command: String, environment: [RemoteEnvironment.Variable] = [], stdin: Int32, stdout: Int32, stderr: Int32,
             agentWarning: (String) -> Void) throws(SSHError) -> Int32 {
        let channel = try connection.openSessionChannel()
        defer { libssh2_channel_free(channel) }
        var pump = ChannelPump(connection: connection, channel: channel)
        pump.growsWindow = true
        pump.agent = AgentForwarding.start(on: channel, connection: connection, warn: agentWarning)
        try RemoteEnvironment.send(environment, on: channel, connection: connection)
        try connection.startCommand(command, on: channel)
        return try pump.run(stdin: stdin, stdout: stdout, stderr: stderr)
    }

    /// The same for a service caller: input from memory, output to a closure (stream 0 is
    /// stdout, 1 stderr).
    func run(_ command: String, input: [UInt8], output: @escaping (Int32, UnsafeRawBufferPointer) -> Void) throws(SSHError) -> Int32 {
        let channel = try connection.openSessionChannel()
        defer { libssh2_channel_free(channel) }
        try connection.startCommand(command, on: channel)
        var pump = ChannelPump(connection: connection, channel: channel)
        pump.growsWindow = true
        return try pump.run(input: .bytes(input), output: output)
    }
}

extension SSHConnection {
    /// A "session" channel with OpenSSH's window (2 MiB) and packet size (32 KiB): the one a
    /// kept connection opened to prove it alive (ConnectionPool), else a new one.
    func openSessionChannel() throws(SSHError) -> OpaquePointer {
        if let reserved = reservedChannel {
            reservedChannel = nil
            return reserved
        }
        guard let channel = probeChannel() else {
            throw SSHError("ssh: cannot open a channel to \(shownAddress): \(lastError())")
        }
        return channel
    }

    /// Sends "exec" and waits for the server's answer, which is also timed as a round trip: the
    /// first channel open after login often waits ~40 ms more (the server's small packets held
    /// by Nagle until this end's delayed ACK), this answer does not.
    func startCommand(_ command: String, on channel: OpaquePointer) throws(SSHError) {
        let start = ReceiveWindow.now()
        guard libssh2_channel_process_startup(channel, "exec", 4, command, UInt32(command.utf8.count)) == 0 else {
            throw SSHError("ssh: the server refused to run the command: \(lastError())")
        }
        noteRoundTrip(since: start)
    }

    /// A new "session" channel, or nil (lastError() says why).
    func probeChannel() -> OpaquePointer? {
        let start = ReceiveWindow.now()
        let channel = libssh2_channel_open_ex(session, "session", 7, UInt32(ReceiveWindow.initial), 32768, nil, 0)
        if channel != nil { noteRoundTrip(since: start) }
        return channel
    }
}

/// Moves bytes between local descriptors and a started channel until the remote side is done,
/// then returns its exit status.
///
/// libssh2 1.10 rules kept here (see Docs/Architecture.md): the session is non-blocking during
/// the pump; after EAGAIN a write is repeated with the same pointer and length (the pending
/// input lives in one buffer allocated once); every pass drains both streams, because libssh2
/// buffers data for a channel while other calls read the socket; and a poll never waits
/// forever when libssh2 reports no direction.
struct ChannelPump {
    let connection: SSHConnection
    let channel: OpaquePointer
    /// Looks at input before it is sent (the terminal's escape sequences); returns the bytes to
    /// send, and true to end the session at once.
    var filterInput: (([UInt8]) -> (send: [UInt8], disconnect: Bool))? = nil
    /// Called on every pass (the terminal sends window changes from here).
    var onPass: ((OpaquePointer) -> Void)? = nil
    /// Forwarded agent connections, served on every pass (`-A`).
    var agent: AgentForwarding? = nil
    /// A session channel (a command, a shell) ends at the server's close, which follows its exit
    /// status; a forwarded connection (-W, a jump host's tunnel) has none and ends at its EOF.
    var endsAtClose = true
    /// A bulk stream (a command's output, -W, a jump host's tunnel): its receive window grows
    /// while the path needs it (ReceiveWindow). Not for a terminal.
    var growsWindow = false

    enum Input { case descriptor(Int32), bytes([UInt8]) }

    func run(stdin: Int32, stdout: Int32, stderr: Int32) throws(SSHError) -> Int32 {
        try run(input: .descriptor(stdin)) { stream, data in
            writeAll(stream == 0 ? stdout : stderr, data.baseAddress!, data.count)
        }
    }

    func run(input: Input, output: (Int32, UnsafeRawBufferPointer) -> Void) throws(SSHError) -> Int32 {
        var stdin: Int32 = -1
        var memory: [UInt8] = []
        var memoryOffset = 0
        switch input {
        case .descriptor(let fd): stdin = fd
        case .bytes(let bytes): memory = bytes
        }
        let session = connection.session
        libssh2_session_set_blocking(session, 0)
        defer { libssh2_session_set_blocking(session, 1) }

        // 256 KiB a direction (NOTES §8's quantum): fewer passes per MiB for bulk streams.
        let capacity = 256 * 1024
        let pending = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
        defer { pending.deallocate() }
        var pendingStart = 0, pendingEnd = 0
        var stdinOpen: Bool
        switch input { case .descriptor(let fd): stdinOpen = fd >= 0; case .bytes: stdinOpen = true }
        var eofSent = false
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
        defer { buffer.deallocate() }
        var window = connection.receiveWindow(grows: growsWindow)
        defer { connection.release(window) }

        while true {
            // Whether this pass moved any bytes: if so, go round again at once; only a pass
            // that moved nothing waits in poll (up to 100 ms).
            var progressed = false
            onPass?(channel)
            if let agent, agent.pass() { progressed = true }
            // Drain both streams.
            for stream in [Int32(0), Int32(1)] {
                while true {
                    let n = libssh2_channel_read_ex(channel, stream, buffer.assumingMemoryBound(to: CChar.self), capacity)
                    if n > 0 {
                        output(stream, UnsafeRawBufferPointer(start: buffer, count: n))
                        progressed = true
                        connection.received(n, on: channel, window: &window)
                        continue
                    }
                    if LibSSH2.wouldBlock(n) || n == 0 { window.empty(); break }
                    throw SSHError("Connection to \(connection.shownAddress) closed: \(connection.lastError())")
                }
            }
            if libssh2_channel_eof(channel) != 0 {
                guard endsAtClose else { break }
                // The server's EOF ends the command's output, not the command: its exit status
                // comes later (a command that closed stdout and runs on; asyncssh sends EOF
                // before the status), always before the server's close. Closing now would lose
                // it. stdin still goes over meanwhile, as OpenSSH's ssh does.
                let rc = libssh2_channel_wait_closed(channel)
                if rc == 0 { break }
                if !LibSSH2.wouldBlock(rc) {
                    throw SSHError("Connection to \(connection.shownAddress) closed: \(connection.lastError())")
                }
            }
            // Send what stdin gave us, one outstanding write at a time. A call sends at most one
            // channel packet (32,700 bytes): keep calling while the window takes them, so that a
            // full buffer goes out in one pass rather than one packet per pass (and per poll).
            if pendingStart < pendingEnd {
                while pendingStart < pendingEnd {
                    let n = libssh2_channel_write_ex(channel, 0, (pending + pendingStart).assumingMemoryBound(to: CChar.self), pendingEnd - pendingStart)
                    if n > 0 { pendingStart += n; progressed = true; continue }
                    if !LibSSH2.wouldBlock(n) && n != 0 {
                        throw SSHError("Connection to \(connection.shownAddress) closed: \(connection.lastError())")
                    }
                    break
                }
            } else if stdin < 0 && stdinOpen {
                // Input from memory: the next chunk goes into the same pending buffer.
                let n = min(capacity, memory.count - memoryOffset)
                if n > 0 {
                    memory.withUnsafeBytes { pending.copyMemory(from: $0.baseAddress! + memoryOffset, byteCount: n) }
                    memoryOffset += n
                    pendingStart = 0
                    pendingEnd = n
                } else {
                    stdinOpen = false
                }
                continue
            } else if !stdinOpen && !eofSent {
                let rc = libssh2_channel_send_eof(channel)
                if !LibSSH2.wouldBlock(rc) { eofSent = true }
            }
            // A keepalive may go out unless a transport packet is half sent (HalfSentPacket); a
            // write waiting only for the channel window leaves the socket free.
            try connection.checkAlive(mayWrite: pendingStart == pendingEnd || !HalfSentPacket.isLeft(in: session))
            // Wait for the socket (and stdin when there is room for more input).
            var fds = [pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0)]
            let directions = libssh2_session_block_directions(session)
            // Only what libssh2 says it waits for: a write stuck on the channel window waits for
            // the server's window adjust (inbound), and polling for POLLOUT then would spin.
            if directions & LIBSSH2_SESSION_BLOCK_OUTBOUND != 0 { fds[0].events |= Int16(POLLOUT) }
            let watchStdin = stdin >= 0 && stdinOpen && pendingStart == pendingEnd
            if watchStdin { fds.append(pollfd(fd: stdin, events: Int16(POLLIN), revents: 0)) }
            if let agent { fds += agent.descriptors }   // after stdin: only fds[0] and fds[1] are read below
            let rc = poll(&fds, nfds_t(fds.count), progressed ? 0 : 100)
            if rc < 0 && errno != EINTR { throw SSHError("ssh: poll: \(String(cString: strerror(errno)))") }
            if fds[0].revents & Int16(POLLHUP | POLLERR) != 0 && fds[0].revents & Int16(POLLIN) == 0 {
                throw SSHError("Connection to \(connection.shownAddress) closed by remote host.")
            }
            if watchStdin, fds.count > 1, fds[1].revents != 0 {
                // A terminal's filter may return a byte more than it was given (a held `~` and
                // the next one): half the buffer leaves it room. A tty reads far less anyway.
                let n = read(stdin, pending, filterInput == nil ? capacity : capacity / 2)
                if n > 0 {
                    pendingStart = 0
                    pendingEnd = n
                    // Only a terminal's input is looked at (and copied for it); exec's goes as read.
                    if let filterInput {
                        let (send, disconnect) = filterInput(Array(UnsafeRawBufferPointer(start: pending, count: n)))
                        if disconnect { return 255 }
                        send.withUnsafeBytes { if !$0.isEmpty { pending.copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
                        pendingEnd = send.count
                    }
                } else if n == 0 || errno != EINTR {
                    stdinOpen = false
                }
            }
        }
        // The remote side is done (closed, or at EOF for a forwarded connection): close, wait
        // for the close (bounded: a dead network must not hold us), read the status.
        let deadline = time(nil) + 5
        var rc: Int32
        repeat { rc = libssh2_channel_close(channel); if LibSSH2.wouldBlock(rc) { waitSocket() } } while LibSSH2.wouldBlock(rc) && time(nil) < deadline
        repeat { rc = libssh2_channel_wait_closed(channel); if LibSSH2.wouldBlock(rc) { waitSocket() } } while LibSSH2.wouldBlock(rc) && time(nil) < deadline
        guard endsAtClose else { return 0 }
        let ended = ExitStatus.of(channel)
        if let message = ended.message {
            message.utf8CString.withUnsafeBytes { output(1, UnsafeRawBufferPointer(rebasing: $0.dropLast())) }
        }
        return ended.status
    }

    private func waitSocket() {
        var pfd = pollfd(fd: connection.socket, events: Int16(POLLIN | POLLOUT), revents: 0)
        _ = poll(&pfd, 1, 100)
    }
}

func writeAll(_ fd: Int32, _ data: UnsafeRawPointer, _ count: Int) {
    var done = 0
    while done < count {
        let n = write(fd, data + done, count - done)
        if n < 0 { if errno == EINTR { continue } else { return } }
        done += n
    }
}

func writeAll(_ fd: Int32, _ text: String) {
    let bytes = Array(text.utf8)
    bytes.withUnsafeBytes { writeAll(fd, $0.baseAddress!, $0.count) }
}
