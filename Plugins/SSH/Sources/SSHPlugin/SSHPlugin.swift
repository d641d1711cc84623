// The SSH plugin: the one place that connects, verifies host keys and authenticates, over
// libssh2. This first part provides the vault's hosts and `termhost exec`.
import CLibSSH2
import CTermhost
import Foundation
import Synchronization
import TermhostSDK

final class SSHFeature: Feature {
    static let info = FeatureInfo(
        id: "org.termhost.ssh", version: "0.1.0", displayName: "SSH",
        summary: "Saved hosts, host-key trust, authentication and remote commands over SSH.",
        order: 100, requiresServices: ["termhost.store/1", "termhost.interact/1"],
        providesServices: ["org.termhost.ssh.transport/1", "org.termhost.ssh.sessions/1"],
        commands: [
            Command("exec", summary: "Run a command on a host: termhost exec HOST -- COMMAND...",
                    usage: """
                    usage: termhost exec [-q] [-A|-a] [-J JUMP[,JUMP...]] HOST [--] COMMAND [ARG]...
                    HOST is a saved host (termhost hosts list) or user@host[:port].
                    -J goes through jump hosts (up to 8), like ssh -J; a saved host's own jump
                    route is used when -J is not given.
                    -q does not show the server's banner (nor does --json).
                    -A forwards your ssh-agent to the host, -a does not (the default, unless the
                    saved host has --forward-agent yes), like ssh -A and -a.
                    Put -- before COMMAND when it has options termhost reads itself (--json,
                    --help): before --, they are termhost's.
                    stdin goes to the command; its stdout and stderr come back apart; its exit
                    status becomes termhost's (255 when the connection or authentication fails).
                    """),
            Command("ssh", summary: "Open an interactive shell on a host: termhost ssh HOST",
                    usage: """
                    usage: termhost ssh [-q] [-A|-a] [-J JUMP[,JUMP...]] HOST [COMMAND [ARG]...]
                    HOST is a saved host (termhost hosts list) or user@host[:port].
                    -J goes through jump hosts (up to 8), like ssh -J.
                    -q does not show the server's banner (nor does --json).
                    -A forwards your ssh-agent to the host, -a does not, like ssh -A and -a.
                    Without a command: an interactive shell on a terminal. Escapes, after a
                    newline: ~. disconnects, ~? lists them, ~~ sends a ~.
                    With a command: runs it like 'termhost exec'.
                    The exit status is the remote one (255 when the connection fails).
                    """),
            Command("hosts", summary: "Saved hosts: add, edit, list, show, rm, import, history, commands", usage: HostsCommand.usage),
            Command("identities", summary: "Saved log-in identities: add, list, show, rm", usage: IdentitiesCommand.usage),
            Command("known-hosts", summary: "Host keys accepted in termhost and synced: list, rm", usage: KnownHostsCommand.usage),
            Command("sandbox", summary: "A local sshd to try Termhost with: start, stop, status",
                    usage: """
                    usage: termhost sandbox start|stop|status
                    start: runs OpenSSH's sshd on 127.0.0.1 as you, with generated keys, and saves
                    the host 'sandbox' (try 'termhost ssh sandbox'). status exits 3 when stopped.
                    """),
        ],
        tools: SSHTools.all)

    let host: PluginHost
    /// This instance's transport service: its own table and context (host.h, "Provider
    /// context"), so no global holds the host.
    let transport: TransportProvider
    /// This instance's persistent terminal sessions (ssh/sessions.h): in the daemon, where the
    /// process lives on, they outlive the clients that opened them.
    let sessions: SessionsProvider
    /// The tool calls running now, for cancelTool (SSHTools.swift).
    let toolCalls = ToolCalls()
    /// Ends sessions of hosts another device changed, and tells the other plugins (HostSyncWatch.swift).
    let syncWatch: HostSyncWatch
    /// The assistant's waiting Asks, into the events of sessions to their hosts (ApprovalWatch.swift).
    let approvalWatch: ApprovalWatch
    init(host: PluginHost, scene: SceneInfo) throws {
        self.host = host
        transport = TransportProvider(host: host)
        sessions = SessionsProvider(host: host)
        syncWatch = HostSyncWatch(host: host)
        approvalWatch = ApprovalWatch(host: host, sessions: sessions)
    }

    func service(_ id: String) -> UnsafeRawPointer? {
        switch id {
        case TERMHOST_SSH_TRANSPORT: UnsafeRawPointer(transport.table)
        case TERMHOST_SSH_SESSIONS: UnsafeRawPointer(sessions.table)
        default: nil
        }
    }

    func run(_ command: CommandInvocation) -> Int32 {
        guard let store = host.store else { command.printError("termhost: the host store is unavailable"); return 1 }
        let vault = Vault(store: store, interact: host.interact)
        switch command.command {
        case "hosts": return HostsCommand.run(command, vault: vault, commands: host.commands)
        case "identities": return IdentitiesCommand.run(command, vault: vault, host: host)
        case "known-hosts": return KnownHostsCommand.run(command, store: store)
        case "exec": return exec(command, vault: vault)
        case "ssh": return ssh(command, vault: vault)
        case "sandbox": return Sandbox(vault: vault, log: { self.host.log(.info, $0) }).run(command)
        default: return 2
        }
    }

    /// Restores the local terminal, ends the persistent sessions (their sockets shut down at
    /// once, so 0.1 s is ample), closes the books on sessions cut short by a signal, and closes
    /// the transport connections other plugins still hold (they shut down before this feature,
    /// which they depend on). Bounded: 0.5 s of the host's 3, which SFTP's pause (2.5 s) leaves.
    func shutdown() {
        RawMode.leaveAll()
        syncWatch.cancel()
        approvalWatch.cancel()
        sessions.killAll(bound: 0.1)
        OpenSessions.endAll(status: 255)
        TransportService.closeAll(of: transport, bound: 0.4)
        ConnectionPool.shared.closeAll()
    }

    func ssh(_ c: CommandInvocation, vault: Vault) -> Int32 {
        let parsed: RemoteCommandArguments
        do { parsed = try RemoteCommandArguments(c) } catch { return error.status }
        guard let target = parsed.host else { c.printError(RemoteCommandArguments.sshUsage); return 2 }
        if let address = parsed.stdioForward {
            return connect(c, vault: vault, target: target, jump: parsed.jump, forwardAgent: false,
                           banner: parsed.bannerOutput(c), warnings: parsed.warningOutput(c)) { (connection, _) throws(SSHError) -> Int32 in
                try StdioForward(connection: connection, host: address.host, port: address.port)
                    .run(stdin: c.stdinFD, stdout: c.stdoutFD, stderr: c.stderrFD)
            }
        }
        if !parsed.command.isEmpty { return exec(c, vault: vault) }
        return terminal(c, vault: vault, parsed, target: target, command: nil)
    }

    /// A session on a remote terminal: the login shell, or (`-t`) a command.
    func terminal(_ c: CommandInvocation, vault: Vault, _ parsed: RemoteCommandArguments, target: String, command: String?) -> Int32 {
        connect(c, vault: vault, target: target, jump: parsed.jump, forwardAgent: parsed.forwardAgent, environment: parsed.environment,
                banner: parsed.bannerOutput(c), warnings: parsed.warningOutput(c)) { (connection, environment) throws(SSHError) -> Int32 in
            let commands = CommandHistory(store: vault.store)
            let name = try? vault.resolve(target)?.name
            return try TerminalSession(connection: connection, log: { self.host.log(.warning, $0) },
                                       onCommand: { try? commands.record($0, host: name ?? target) },
                                       command: command, terminal: parsed.terminal, environment: environment)
                .run(stdin: c.stdinFD, stdout: c.stdoutFD, stderr: c.stderrFD, agentWarning: parsed.warningOutput(c))
        }
    }

    /// Resolves, connects (trust and auth inside), publishes the session's start and end, runs
    /// body, and maps failures to ssh's status 255 with the message on stderr.
    /// `share`: in the daemon, a kept connection to the same destination is used when there
    /// is one, and this one is kept afterwards (ConnectionPool); never with agent forwarding.
    /// `environment`: the command line's SendEnv and SetEnv, added to the saved host's; the
    /// body gets the variables to send, read for this command's user.
    func connect(_ c: CommandInvocation, vault: Vault, target: String, jump: [String], forwardAgent: Bool? = nil,
                 environment: RemoteEnvironment = RemoteEnvironment(),
                 banner: (@Sendable (String) -> Void)?, warnings: (@Sendable (String) -> Void)? = nil, share: Bool = false,
                 joined: ((TransportConnection, [RemoteEnvironment.Variable], _ cancelled: () -> Bool) throws(SSHError) -> Int32)? = nil,
                 _ body: (SSHConnection, [RemoteEnvironment.Variable]) throws(SSHError) -> Int32) -> Int32 {
        var retired = false
        let cancelled = Mutex(false)
        do {
            guard var destination = try vault.resolve(target) else {
                c.printError("termhost: '\(VisibleText.of(target))' is neither a saved host nor user@host[:port]")
                return 2
            }
            // -A/-a apply to the last hop only, as ssh's do: jump hosts never get the agent.
            if let forwardAgent { destination.forwardAgent = forwardAgent }
            let hops = try JumpRoute.hops(to: destination, extra: jump, vault: vault)
            let prompts = ConnectionPrompts(host: host, scene: c.scene, showBanner: banner, warn: warnings)
            let keepSeconds = share && destination.forwardAgent != true ? try ConnectionPool.keepSeconds(host) : nil
            let key = ConnectionPool.key(destination, hops: hops, agent: prompts.agentSocket)
            // A live connection another user shares (TransportLink) takes the command as one
            // more channel; else one kept idle is taken, or a new one made.
            let shared = keepSeconds != nil && joined != nil ? TransportService.join(key, provider: transport) : nil
            // In the handle table, so the feature's shutdown closes it if the command is cut short.
            let sharedHandle = shared.map { TransportService.handles.insert($0) }
            defer { if let sharedHandle { transport.table.pointee.close(sharedHandle) } }
            let kept = shared == nil && keepSeconds != nil ? ConnectionPool.shared.take(key, reserve: true, log: host) : nil
            let connection = try shared?.connection ?? kept ?? JumpRoute.connect(to: destination, through: hops, interaction: prompts)
            var reusable = false
            defer {
                if shared == nil {
                    if let keepSeconds, reusable { ConnectionPool.shared.keep(connection, key, seconds: keepSeconds) } else { connection.teardown() }
                }
            }
            // History starts only once authenticated, and ends however the session ends: normally
            // here, or from shutdown() when a signal cuts the command short.
            var session = OpenSessions.Session(host: destination.name, user: connection.user,
                                               started: Date().timeIntervalSince1970, vault: vault, pluginHost: host,
                                               socket: connection.socket, stderr: c.stderrFD)
            if shared != nil { session.retireChannel = { cancelled.withLock { $0 = true } } }
            try? host.events?.publish("org.termhost.ssh.session.started",
                                      json: "{\"host\":\(JSONText.quoted(destination.name)),\"user\":\(JSONText.quoted(connection.user))}")
            let token = OpenSessions.add(session)
            var status: Int32 = 255
            defer { retired = OpenSessions.end(token, status: status) }
            // Ctrl-C (in the daemon: the client's signal, or the client going away) ends the
            // session: its socket is shut down, so the pump's next pass fails and the command
            // returns instead of running on unseen. On a shared connection only the command's
            // channel closes: the flag is seen between steps.
            let socket = connection.socket
            let cancel = try? host.cancellation?.onCancel(scene: c.scene) { _ in
                cancelled.withLock { $0 = true }
                if shared == nil { _ = Glibc.shutdown(socket, Int32(SHUT_RDWR)) }
            }
            defer { cancel?.remove() }
            let variables = RemoteEnvironment(host: destination, commandLine: environment).variables(for: prompts)
            if let shared, let joined {
                status = try joined(shared, variables) { cancelled.withLock { $0 } }
                return status
            }
            status = try body(connection, variables)
            // Kept only as it was found: not cut short, not told goodbye by the server.
            reusable = !cancelled.withLock { $0 } && connection.sessionContext.disconnect == nil
            return status
        } catch let error as SSHError {
            // A session retired by a synced change said why already; the socket error adds
            // nothing, nor does it after a Ctrl-C.
            if !retired && !cancelled.withLock({ $0 }) { c.printError(error.message) }
            return error.status
        } catch {
            c.printError("termhost: \(error)")
            return 1
        }
    }

    func exec(_ c: CommandInvocation, vault: Vault) -> Int32 {
        let parsed: RemoteCommandArguments
        do { parsed = try RemoteCommandArguments(c) } catch { return error.status }
        var args = parsed.command
        if args.first == "--" { args.removeFirst() }
        guard let target = parsed.host, !args.isEmpty else { c.printError(RemoteCommandArguments.execUsage); return 2 }
        // -t: the command on a remote terminal (sudo -i, tmux attach), as ssh -t HOST COMMAND.
        if case .force = parsed.terminal { return terminal(c, vault: vault, parsed, target: target, command: args.joined(separator: " ")) }
        let command = args.joined(separator: " ")
        return connect(c, vault: vault, target: target, jump: parsed.jump, forwardAgent: parsed.forwardAgent, environment: parsed.environment,
                       banner: parsed.bannerOutput(c), warnings: parsed.warningOutput(c), share: true,
                       joined: { (shared, environment, cancelled) throws(SSHError) -> Int32 in
                           try TransportService.runExec(shared, command: command, environment: environment, stdin: c.stdinFD,
                                                        stdout: c.stdoutFD, stderr: c.stderrFD, cancelled: cancelled)
                       }) { (connection, environment) throws(SSHError) -> Int32 in
            try ExecChannel(connection: connection).run(command, environment: environment, stdin: c.stdinFD, stdout: c.stdoutFD,
                                                        stderr: c.stderrFD, agentWarning: parsed.warningOutput(c))
        }
    }
}

let plugin = Plugin(id: "org.termhost.ssh", version: "0.1.0", features: [SSHFeature.self]) { host in
    // Global and not thread-safe: once, at plugin init, before any session exists.
    libssh2_init(0)
    BulkCipher.enable(host)
    // What the Sync plugin replicates (Docs/Sync.md). An identity's secret IDs stay on this
    // device: the secrets they name never leave it. A refusal only means nothing syncs.
    // A host's SendEnv stays on this device: which of the user's variables leave it (a token, a
    // cloud key) is never decided by another device's version.
    _ = try? host.store?.declareSyncable("hosts", merge: .fields, localFields: ["sendEnv"])
    _ = try? host.store?.declareSyncable("identities", merge: .fields, localFields: ["passwordSecret", "keySecret"])
    _ = try? host.store?.declareSyncable(SyncedHostKeys.collection, merge: .record)
    // Another device's versions meet the rules local input meets before they are applied.
    _ = try? host.store?.declareSyncCheck("hosts", SyncedRecordRules.host)
    _ = try? host.store?.declareSyncCheck("identities", SyncedRecordRules.identity)
    _ = try? host.store?.declareSyncCheck(SyncedHostKeys.collection, SyncedRecordRules.hostKey)
}

@_cdecl("termhost_plugin_entry")
public func termhostPluginEntry() -> UnsafeRawPointer { plugin.entry }
