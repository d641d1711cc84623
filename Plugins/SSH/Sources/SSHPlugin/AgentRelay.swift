import CLibSSH2
import LibSSH2
import Glibc

/// One forwarded agent connection: an `auth-agent@openssh.com` channel the server opened,
/// spliced to its own connection to the local agent. Bytes pass through untouched: the agent
/// parses its protocol (with its own limits), so nothing here reads what the server sends.
///
/// Each direction has one buffer, allocated once: a channel write that returned EAGAIN is
/// repeated with the same pointer and length, as ChannelPump's are. [session, non-blocking]
final class AgentRelay {
    let channel: OpaquePointer
    private let socket: Int32
    private let capacity = 32 * 1024
    private let toAgent: UnsafeMutableRawPointer
    private let toServer: UnsafeMutableRawPointer
    private var toAgentStart = 0, toAgentEnd = 0
    private var toServerStart = 0, toServerEnd = 0
    /// The server sent EOF (its client closed the forwarded socket) or the channel failed.
    private var serverDone = false
    /// The agent closed its end, or it failed.
    private var agentDone = false
    private var agentShutDown = false
    private var eofSent = false

    init(channel: OpaquePointer, agent socket: Int32) {
        self.channel = channel
        self.socket = socket
        toAgent = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
        toServer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
    }

    deinit {
        close(socket)
        toAgent.deallocate()
        toServer.deallocate()
    }

    /// Both sides are done and nothing is left to pass on: the channel can be closed.
    var finished: Bool { serverDone && agentDone && toAgentStart == toAgentEnd && toServerStart == toServerEnd }

    /// What poll() should wait for on the agent's socket.
    var events: Int16 {
        var events: Int16 = 0
        if !agentDone && toServerStart == toServerEnd { events |= Int16(POLLIN) }
        if toAgentStart < toAgentEnd { events |= Int16(POLLOUT) }
        return events
    }

    var descriptor: Int32 { socket }

    /// Moves what it can in both directions without waiting; true when a byte moved.
    func step() -> Bool {
        var moved = false
        // Server to agent.
        if toAgentStart == toAgentEnd && !serverDone {
            let n = libssh2_channel_read_ex(channel, 0, toAgent.assumingMemoryBound(to: CChar.self), capacity)
            if n > 0 {
                (toAgentStart, toAgentEnd) = (0, n)
                moved = true
            } else if n == 0 || LibSSH2.wouldBlock(n) {
                serverDone = libssh2_channel_eof(channel) != 0
            } else {
                (serverDone, agentDone) = (true, true)   // the channel is gone: nothing to answer
                toServerStart = toServerEnd
            }
        }
        if toAgentStart < toAgentEnd {
            // MSG_NOSIGNAL: an agent that closed its end must not raise SIGPIPE in the host.
            let n = send(socket, toAgent + toAgentStart, toAgentEnd - toAgentStart, Int32(MSG_NOSIGNAL))
            if n > 0 { toAgentStart += n; moved = true }
            else if errno != EAGAIN && errno != EINTR { agentGone() }
        }
        if serverDone && toAgentStart == toAgentEnd && !agentShutDown && !agentDone {
            // The agent answers what it has and then closes, as for a local client.
            shutdown(socket, Int32(SHUT_WR))
            agentShutDown = true
        }
        // Agent to server.
        if toServerStart == toServerEnd && !agentDone {
            let n = read(socket, toServer, capacity)
            if n > 0 { (toServerStart, toServerEnd) = (0, n); moved = true }
            else if n == 0 || (errno != EAGAIN && errno != EINTR) { agentDone = true }
        }
        if toServerStart < toServerEnd {
            let n = libssh2_channel_write_ex(channel, 0, (toServer + toServerStart).assumingMemoryBound(to: CChar.self),
                                             toServerEnd - toServerStart)
            if n > 0 { toServerStart += n; moved = true }
            else if !LibSSH2.wouldBlock(n) { (serverDone, agentDone) = (true, true); toServerStart = toServerEnd }
        }
        if agentDone && !serverDone && toServerStart == toServerEnd && !eofSent {
            eofSent = !LibSSH2.wouldBlock(libssh2_channel_send_eof(channel))
        }
        return moved
    }

    private func agentGone() {
        agentDone = true
        toAgentStart = toAgentEnd
        toServerStart = toServerEnd
    }
}
