import CLibSSH2
import LibSSH2
import Glibc
import TermhostSDK

/// Agent forwarding, as `ssh -A`: the remote session gets an `SSH_AUTH_SOCK` whose connections
/// come back over this SSH connection to the local agent. Off unless the saved host has
/// `--forward-agent yes` or the command line has `-A`; only the last hop's session asks.
///
/// Design, from libssh2 1.11.1's source (`channel.c`, `packet.c`):
/// - The request (`auth-agent-req@openssh.com`) goes on the session channel after it opens and
///   before its shell or exec request, as ssh sends it. libssh2 1.10 has the request but no way
///   to accept the channels the server then opens, so forwarding needs 1.11: the version is read
///   at run time, and on 1.10 a warning says so and the session goes on without it.
/// - The server opens one `auth-agent@openssh.com` channel per connection to that socket.
///   libssh2 1.11 confirms it and hands it to the session's `LIBSSH2_CALLBACK_AUTHAGENT`
///   callback, from inside whatever call was reading the transport: the callback only queues the
///   channel (on the SessionContext), and the pump's next pass splices it to a new connection to
///   the local agent (AgentRelay). The callback is set only when forwarding was asked for, so a
///   server that opens agent channels unasked is refused by libssh2.
/// - Like ssh, no agent (or an agent path that is not this user's socket) means no request: a
///   one-line warning, and the session goes on. A refused request (sshd's
///   `AllowAgentForwarding no`) is a warning too.
/// [session] The session is non-blocking while `pass()` runs (inside ChannelPump).
final class AgentForwarding {
    /// libssh2 1.11's LIBSSH2_CALLBACK_AUTHAGENT (1.10's header lacks the name).
    private static let authAgentCallback: Int32 = 7
    /// Forwarded agent connections open at once; more are closed at once (a server could
    /// otherwise use up this process's descriptors).
    static let maximumConnections = 64

    private let connection: SSHConnection
    private let agentPath: String?
    /// Open relays; a channel not closed by the end of the session is freed with it.
    private var relays: [AgentRelay] = []
    /// Channels done with, closed over the next passes (a non-blocking close can take several).
    private var closing: [OpaquePointer] = []

    private init(connection: SSHConnection, agentPath: String?) {
        self.connection = connection
        self.agentPath = agentPath
    }

    /// Requests forwarding on `channel` when the destination wants it and it can be had;
    /// otherwise warns (one line, through `warn`) and returns nil. The session is blocking here.
    static func start(on channel: OpaquePointer, connection: SSHConnection, warn: (String) -> Void) -> AgentForwarding? {
        guard connection.destination.forwardAgent == true else { return nil }
        guard libssh2_version(0x010b00) != nil else {
            warn("Warning: agent forwarding needs libssh2 1.11 or later, and termhost runs with libssh2 " +
                 "\(SSHConnection.libssh2Version) (the setup script builds 1.11.1); continuing without it.")
            return nil
        }
        let path = connection.sessionContext.interaction.agentSocket
        do throws(LocalAgent.Unavailable) {
            close(try LocalAgent.connect(path))   // present now; each forwarded connection opens its own
        } catch {
            warn("Warning: agent forwarding not requested: \(error.reason).")
            return nil
        }
        let session = connection.session
        // Before the request: the server may open its first agent channel as soon as it grants it.
        libssh2_session_callback_set(session, authAgentCallback, unsafeBitCast(agentChannelOpened, to: UnsafeMutableRawPointer.self))
        guard libssh2_channel_request_auth_agent(channel) == 0 else {
            libssh2_session_callback_set(session, authAgentCallback, nil)
            warn("Warning: the server refused agent forwarding (\(connection.lastError())); continuing without it.")
            return nil
        }
        return AgentForwarding(connection: connection, agentPath: path)
    }

    /// Takes the agent channels the server opened, moves bytes on every relay and closes the
    /// finished ones; true when anything moved.
    func pass() -> Bool {
        var moved = false
        let context = connection.sessionContext
        if !context.openedAgentChannels.isEmpty {
            for channel in context.openedAgentChannels { accept(channel) }
            context.openedAgentChannels.removeAll()
            moved = true
        }
        for relay in relays where relay.step() { moved = true }
        for relay in relays where relay.finished { closing.append(relay.channel) }
        relays.removeAll { $0.finished }
        closing.removeAll { !LibSSH2.wouldBlock(libssh2_channel_free($0)) }
        return moved
    }

    /// What poll() should watch besides the SSH socket: each relay's agent connection.
    var descriptors: [pollfd] {
        relays.map { pollfd(fd: $0.descriptor, events: $0.events, revents: 0) }
    }

    private func accept(_ channel: OpaquePointer) {
        guard relays.count < Self.maximumConnections else {
            connection.sessionContext.interaction.host.log(.warning, "agent forwarding: more than \(Self.maximumConnections) connections at once; one was closed")
            closing.append(channel)
            return
        }
        do throws(LocalAgent.Unavailable) {
            relays.append(AgentRelay(channel: channel, agent: try LocalAgent.connect(agentPath)))
        } catch {
            // As ssh: the remote client sees its connection close; the reason goes to the log.
            connection.sessionContext.interaction.host.log(.warning, "agent forwarding: \(error.reason)")
            closing.append(channel)
        }
    }
}

/// libssh2's LIBSSH2_CALLBACK_AUTHAGENT: called from inside a transport read with a channel it
/// has confirmed; only queued here (no libssh2 call may be made from inside the read).
private let agentChannelOpened: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Void = { _, channel, abstract in
    guard let channel, let raw = abstract?.pointee else { return }
    Unmanaged<SessionContext>.fromOpaque(raw).takeUnretainedValue().openedAgentChannels.append(channel)
}
