// The SSH plugin: the one place that connects, verifies host keys and authenticates, over
// libssh2. This first part provides the vault's hosts and `termhost exec`.
import CLibSSH2
import TermhostSDK

final class SSHFeature: Feature {
    static let info = FeatureInfo(
        id: "org.termhost.ssh", version: "0.1.0", displayName: "SSH",
        summary: "Saved hosts, host-key trust, authentication and remote commands over SSH.",
        order: 100, requiresServices: ["termhost.store/1", "termhost.interact/1"],
        commands: [
            Command("exec", summary: "Run a command on a host: termhost exec HOST -- COMMAND...",
                    usage: """
                    usage: termhost exec HOST [--] COMMAND [ARG]...
                    HOST is a saved host (termhost hosts list) or user@host[:port].
                    stdin goes to the command; its stdout and stderr come back apart; its exit
                    status becomes termhost's (255 when the connection or authentication fails).
                    """),
            Command("hosts", summary: "Saved hosts: add, list, show, rm", usage: HostsCommand.usage),
        ])

    let host: PluginHost
    init(host: PluginHost, scene: SceneInfo) throws { self.host = host }

    func run(_ command: CommandInvocation) -> Int32 {
        guard let store = host.store else { command.printError("termhost: the host store is unavailable"); return 1 }
        let vault = Vault(store: store)
        switch command.command {
        case "hosts": return HostsCommand.run(command, vault: vault)
        case "exec": return exec(command, vault: vault)
        default: return 2
        }
    }

    func exec(_ c: CommandInvocation, vault: Vault) -> Int32 {
        var args = c.arguments
        guard !args.isEmpty else { c.printError("usage: termhost exec HOST [--] COMMAND [ARG]..."); return 2 }
        let target = args.removeFirst()
        if args.first == "--" { args.removeFirst() }
        guard !args.isEmpty else { c.printError("usage: termhost exec HOST [--] COMMAND [ARG]..."); return 2 }
        do {
            guard let destination = try vault.resolve(target) else {
                c.printError("termhost exec: '\(target)' is neither a saved host nor user@host[:port]")
                return 2
            }
            let connection = try SSHConnection(to: destination, interaction: Interaction(host: host, scene: c.scene))
            defer { connection.teardown() }
            return try ExecChannel(connection: connection).run(args.joined(separator: " "), stdin: c.stdinFD,
                                                               stdout: c.stdoutFD, stderr: c.stderrFD)
        } catch let error as SSHError {
            c.printError(error.message)
            return error.status
        } catch {
            c.printError("termhost exec: \(error)")
            return 1
        }
    }
}

let plugin = Plugin(id: "org.termhost.ssh", version: "0.1.0", features: [SSHFeature.self]) { _ in
    // Global and not thread-safe: once, at plugin init, before any session exists.
    libssh2_init(0)
}

@_cdecl("termhost_plugin_entry")
public func termhostPluginEntry() -> UnsafeRawPointer { plugin.entry }
