import CLibSSH2
import LibSSH2
import Foundation
import Glibc
import TermhostSDK

/// What a connection attempt may ask the user, and where (the scene's terminal, if any); and
/// the user's environment it reads (their agent, their TERM).
struct ConnectionPrompts {
    let host: PluginHost
    let scene: UInt64
    /// Where the server's userauth banner goes (`exec` and `ssh`: stderr); nil shows none.
    var showBanner: (@Sendable (String) -> Void)? = nil
    /// Where a line about something skipped goes (a key that cannot be used): stderr for `exec`
    /// and `ssh` unless `-q`, as ssh's; nil sends it to the host's log (no user is watching).
    var warn: (@Sendable (String) -> Void)? = nil

    func notify(_ text: String) { host.interact?.notify(text, scene: scene) }

    /// Says `line` where `warn` sends it, else in the host's log.
    func warning(_ line: String) {
        if let warn { warn(line) } else { host.log(.warning, line) }
    }

    /// A variable of the environment of the user this connection is for (in the daemon, the
    /// client's, not the daemon's: termhost.environment/1); nil when unset.
    func variable(_ name: String) -> String? { host.variable(name, scene: scene) }

    /// `$SSH_AUTH_SOCK` of that environment, nil when unset or empty.
    var agentSocket: String? { variable("SSH_AUTH_SOCK").flatMap { $0.isEmpty ? nil : $0 } }
}

/// One authenticated SSH connection: TCP, handshake, host-key trust and authentication, all in
/// the same connection attempt (no separate discovery connection).
///
/// Threading: libssh2 allows one caller per session at a time, so a connection is used from
/// one thread at a time (its owner); nothing here is shared.
final class SSHConnection {
    let destination: Destination
    let user: String
    let socket: Int32
    let session: OpaquePointer
    private let context: Unmanaged<SessionContext>

    /// The connection and tunnel this one runs through when it was reached over a jump host.
    var upstream: JumpTunnel?
    /// libssh2's timeout for blocking calls: the connectTimeout it was made with (closing may
    /// shorten it; a kept connection gets it back).
    let timeoutSeconds: Int
    /// A session channel opened when the connection was taken from the ConnectionPool (its
    /// proof of life), handed out by the next openSessionChannel().
    var reservedChannel: OpaquePointer?
    /// Dead-peer detection (ServerAliveInterval, ServerAliveCountMax); 0 turns it off.
    var keepaliveInterval = 0
    var keepaliveCountMax = 3

    /// The receiveWindowMiB setting in bytes: how much this connection's channels may grow their
    /// windows together (ReceiveWindow); `windowBudget` is what is left of it.
    let windowBudgetTotal: Int
    private(set) var windowBudget = 0
    /// The quickest request-and-answer seen on this connection (a channel open or an exec
    /// request), in seconds: an upper bound of the round trip, which receive windows grow from.
    private(set) var roundTrip: Double?

    /// Notes how long a request took to be answered (a channel open, an exec request), from
    /// its start (ReceiveWindow.now).
    func noteRoundTrip(since start: UInt64) {
        let seconds = Double(ReceiveWindow.now() &- start) / 1e9
        if roundTrip.map({ seconds < $0 }) ?? true { roundTrip = seconds }
    }

    /// A receive window for a new channel of this connection: one that grows for bulk data,
    /// one that never does for a terminal (`grows` false).
    func receiveWindow(grows: Bool) -> ReceiveWindow { ReceiveWindow(roundTrip: grows ? roundTrip : nil) }

    /// Counts `count` bytes read on a channel with `window`, growing it from the budget.
    func received(_ count: Int, on channel: OpaquePointer, window: inout ReceiveWindow) {
        guard let size = window.received(count, on: channel, budget: &windowBudget) else { return }
        let ms = (roundTrip ?? 0) * 1000
        sessionContext.interaction.host.log(.debug, "receive window of a channel to \(shownAddress) grown to \(size) bytes " +
            "(round trip \(Int(ms.rounded())) ms; \(windowBudget) of the receiveWindowMiB budget's \(windowBudgetTotal) bytes left)")
    }

    /// A channel ended: what its window grew goes back to the budget.
    func release(_ window: ReceiveWindow) { windowBudget += window.grown }

    /// Connects over TCP, or over `socket` when given (one end of a jump host's tunnel).
    init(to destination: Destination, interaction: ConnectionPrompts, over tunnelSocket: Int32? = nil,
         timeoutSeconds: Int = 15) throws(SSHError) {
        self.destination = destination
        // Callers pass a checked setting; clamped again because it becomes milliseconds.
        let timeoutSeconds = min(max(timeoutSeconds, ConnectionSettings.connectTimeoutSeconds.lowerBound),
                                 ConnectionSettings.connectTimeoutSeconds.upperBound)
        self.timeoutSeconds = timeoutSeconds
        user = destination.user ?? SSHConnection.localUser()
        // Checked before anything is connected: a bad number must not cost a password prompt.
        // (A tunnel's socket is ours to close on every path, this one included.)
        let interval: Int, count: Int
        do throws(SSHError) {
            (interval, count) = try SSHConnection.keepalive(destination, interaction.host)
            windowBudgetTotal = try ConnectionSettings.receiveWindow(interaction.host)
            windowBudget = windowBudgetTotal
        } catch { if let tunnelSocket { close(tunnelSocket) }; throw error }
        if let tunnelSocket {
            self.socket = tunnelSocket
        } else {
            self.socket = try TCPSocket.connect(host: destination.address, port: destination.port, timeoutSeconds: timeoutSeconds)
        }
        context = Unmanaged.passRetained(SessionContext(interaction: interaction, destination: destination, user: user))
        guard let session = libssh2_session_init_ex(nil, nil, nil, context.toOpaque()) else {
            close(socket)
            context.release()
            throw SSHError("ssh: cannot create an SSH session (out of memory)")
        }
        self.session = session
        libssh2_session_callback_set(session, LIBSSH2_CALLBACK_RECV, unsafeBitCast(timedReceive, to: UnsafeMutableRawPointer.self))
        libssh2_session_set_blocking(session, 1)
        libssh2_session_set_timeout(session, timeoutSeconds * 1000)
        do throws(SSHError) {
            let known = try HostKeyTrust.knownHosts(interaction: interaction)
            let hostKeys = HostKeyPreference.apply(to: session, knownKeyTypes: known.keyTypes(host: destination.hostKeyName, port: destination.hostKeyPort),
                                                   certificateAuthority: known.hasCertificateAuthority(host: destination.hostKeyName, port: destination.hostKeyPort))
            CipherPreference.apply(to: session)
            sessionContext.serverOpening = []
            // In the SSH sessions' OpenSSL context: the ciphers it sets up are the bulk AES-CTR.
            guard BulkCipher.during({ libssh2_session_handshake(session, libssh2_socket_t(socket)) }) == 0 else {
                let timedOut = libssh2_session_last_errno(session) == LIBSSH2_ERROR_TIMEOUT
                if !timedOut, let explained = NegotiationFailure.explain(sessionContext.serverOpening ?? [], session: session,
                                                                          hostKeys: hostKeys, host: destination.hostKeyName, port: destination.hostKeyPort) {
                    throw SSHError(explained)
                }
                throw SSHError("ssh: handshake with \(VisibleText.of(destination.address)) port \(destination.port) failed: " +
                               (timedOut ? "no answer within \(timeoutSeconds) s (connectTimeout)" : lastError()))
            }
            sessionContext.serverOpening = nil
            try HostKeyTrust.verify(self, against: known, interaction: interaction)
            try Authenticator(connection: self, interaction: interaction).authenticate()
            keepaliveInterval = interval
            keepaliveCountMax = count
            if keepaliveInterval > 0 { libssh2_keepalive_config(session, 1, UInt32(keepaliveInterval)) }
        } catch {
            teardown()
            throw error
        }
    }

    /// ServerAliveInterval and ServerAliveCountMax: the saved host's own, else the feature's
    /// settings, else 30 s and 3; each range-checked.
    static func keepalive(_ destination: Destination, _ host: PluginHost) throws(SSHError) -> (interval: Int, count: Int) {
        let seconds = ConnectionSettings.keepaliveSeconds, counts = ConnectionSettings.keepaliveCounts
        let savedInterval = try ConnectionSettings.saved(destination.keepaliveInterval, "keepaliveInterval", host: destination.name,
                                                         in: seconds, unit: "seconds")
        let savedCount = try ConnectionSettings.saved(destination.keepaliveCountMax, "keepaliveCountMax", host: destination.name,
                                                      in: counts, unit: "probes")
        let settingInterval = try ConnectionSettings.number(host, "keepaliveInterval", in: seconds, unit: "seconds")
        let settingCount = try ConnectionSettings.number(host, "keepaliveCountMax", in: counts, unit: "probes")
        return (savedInterval ?? settingInterval ?? 30, savedCount ?? settingCount ?? 3)
    }

    deinit { teardown() }

    private var tornDown = false

    /// Disconnects politely within the session timeout, then frees everything. Idempotent.
    func teardown() {
        guard !tornDown else { return }
        tornDown = true
        libssh2_session_set_timeout(session, 2000)
        libssh2_session_disconnect_ex(session, SSH_DISCONNECT_BY_APPLICATION, "closed by termhost", "")
        libssh2_session_free(session)
        close(socket)
        context.release()
        // Inner first, then the hops it ran through.
        upstream?.close()
        upstream = nil
    }

    /// libssh2's own text for the last error, read at once and escaped (LibSSH2.lastError).
    func lastError() -> String { LibSSH2.lastError(session) }

    /// When the server last sent a byte (ConnectionSettings.monotonicMilliseconds).
    var lastReceive: UInt64 { context.takeUnretainedValue().lastReceive }
    var sessionContext: SessionContext { context.takeUnretainedValue() }

    /// The connectTimeout setting in seconds (default 15), range-checked.
    static func connectTimeout(_ host: PluginHost) throws(SSHError) -> Int { try ConnectionSettings.connectTimeout(host) }

    /// Sends a keepalive when one is due and `mayWrite` (no other write pending: libssh2 1.10
    /// sends it from a stack buffer and ignores EAGAIN), and fails when the server has been
    /// silent for interval x count seconds, as OpenSSH's ServerAliveCountMax does.
    func checkAlive(mayWrite: Bool) throws(SSHError) {
        guard keepaliveInterval > 0 else { return }
        var next: Int32 = 0
        if mayWrite { libssh2_keepalive_send(session, &next) }
        let silent = ConnectionSettings.millisecondsSince(lastReceive)
        if ConnectionSettings.silentTooLong(silent, interval: keepaliveInterval, count: keepaliveCountMax) {
            // The server is gone: nothing after this may wait for it (freeing a channel waits
            // for the server's close, up to the session's timeout), so the socket ends now.
            _ = Glibc.shutdown(socket, Int32(SHUT_RDWR))
            throw SSHError("Timeout, server \(shownAddress) not responding.")
        }
    }

    /// The host as messages show it ("[host]:port" off port 22), control characters visible: a
    /// name from a config file or the command line must not write escapes to the terminal.
    /// The host as its key is known; with a HostKeyAlias, the address it really is too, so an
    /// alias never hides where the key came from.
    var hostLabel: String {
        let known = VisibleText.of(KnownHosts.lookupName(host: destination.hostKeyName, port: destination.hostKeyPort))
        guard destination.hostKeyAlias != nil else { return known }
        return "\(known) (\(VisibleText.of(KnownHosts.lookupName(host: destination.address, port: destination.port))))"
    }
    /// The address as messages show it, control characters visible.
    var shownAddress: String { VisibleText.of(destination.address) }

    static func localUser() -> String {
        if let pw = getpwuid(getuid()), let name = pw.pointee.pw_name { return String(cString: name) }
        return ProcessInfo.processInfo.environment["USER"] ?? "root"
    }
}

/// What libssh2's callbacks need (keyboard-interactive prompts, the receive timestamp); they
/// reach it through the session's abstract pointer because a C callback cannot capture context.
final class SessionContext {
    let interaction: ConnectionPrompts
    let destination: Destination
    let user: String
    var failed = false
    /// When the last byte came from the server: keepalive replies are consumed inside libssh2,
    /// so dead-peer detection times the socket reads themselves.
    var lastReceive = ConnectionSettings.monotonicMilliseconds()
    /// A saved password for keyboard-interactive's password prompt, during that call only.
    var savedPassword: String?
    /// What the server said when it disconnected (ServerDisconnect), once it has.
    var disconnect: ServerDisconnect?
    let received = ReceiveBuffer()
    /// What the server sent first (identification and KEXINIT), kept only during the handshake
    /// and at most ServerKexInit.maximumCapture bytes: a failed negotiation is explained from it.
    var serverOpening: [UInt8]?
    /// Agent channels the server opened since AgentForwarding last took them (AgentForwarding).
    var openedAgentChannels: [OpaquePointer] = []
    init(interaction: ConnectionPrompts, destination: Destination, user: String) {
        self.interaction = interaction
        self.destination = destination
        self.user = user
    }
}

/// libssh2's receive callback: reads through the session's ReceiveBuffer and notes when bytes
/// arrived.
private let timedReceive: @convention(c) (libssh2_socket_t, UnsafeMutableRawPointer?, Int, Int32,
                                         UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Int = { socket, buffer, length, flags, abstract in
    guard let raw = abstract?.pointee, let buffer else {
        let n = recv(socket, buffer, length, flags)
        return n < 0 ? -Int(errno) : n
    }
    let context = Unmanaged<SessionContext>.fromOpaque(raw).takeUnretainedValue()
    let n = context.received.receive(socket, into: buffer, length, flags: flags)
    if n > 0 {
        context.lastReceive = ConnectionSettings.monotonicMilliseconds()
        if var kept = context.serverOpening, kept.count < ServerKexInit.maximumCapture {
            context.serverOpening = nil   // appended in place, not copied
            kept.append(contentsOf: UnsafeRawBufferPointer(start: buffer, count: min(n, ServerKexInit.maximumCapture - kept.count)))
            context.serverOpening = kept
        }
    }
    return n
}
