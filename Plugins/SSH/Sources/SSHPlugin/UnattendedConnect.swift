import CTermhost
import TermhostSDK

/// Connections for work no person watches: the built-in tools and transport.h's open_saved.
///
/// Design: a tool's host argument comes from a model, so it is only ever the name of a saved
/// host (never user@host, never something that reads as an option), and a credential or a
/// trust decision never goes through a tool. The connection is made for scene 0, on which the
/// host's interaction service refuses every prompt (fail closed), so nothing is asked even
/// when the process has a terminal; a refusal keeps OpenSSH's text and gains one line that
/// says what the user should run.
enum UnattendedConnect {
    /// The saved host `name`, or an INVALID_ARGUMENT error that names what is wrong with it.
    static func savedHost(_ name: String, vault: Vault) throws(PluginError) -> HostRecord {
        let shown = VisibleText.of(name)
        if let why = HostRules.name(name) {
            throw PluginError("'\(shown)' is not a saved host's name: \(why); list_hosts shows the saved hosts",
                              code: Int32(TERMHOST_ERR_INVALID_ARGUMENT))
        }
        guard let record = try vault.host(name) else {
            throw PluginError("'\(shown)' is not a saved host (list_hosts shows them; save one with 'termhost hosts add NAME ADDRESS')",
                              code: Int32(TERMHOST_ERR_INVALID_ARGUMENT))
        }
        return record
    }

    /// A transport handle on the saved host `name`, jump route included, connected without
    /// prompting; in the daemon through a kept connection when there is one (or, `shared`, a
    /// live one joined: TransportLink), kept there after its last close.
    static func handle(_ name: String, provider: TransportProvider, shared: Bool) throws(PluginError) -> TransportConnection {
        let host = provider.host
        guard let store = host.store else {
            throw PluginError("the SSH feature is not active: the host store is unavailable", code: Int32(TERMHOST_ERR_UNSUPPORTED))
        }
        let vault = Vault(store: store)
        _ = try savedHost(name, vault: vault)
        do {
            guard let destination = try vault.resolve(name) else {
                throw PluginError("'\(VisibleText.of(name))' is not a saved host", code: Int32(TERMHOST_ERR_INVALID_ARGUMENT))
            }
            let hops = try JumpRoute.hops(to: destination, extra: [], vault: vault)
            let prompts = ConnectionPrompts(host: host, scene: 0)
            let kept = try ConnectionPool.keepSeconds(host).map { (key: ConnectionPool.key(destination, hops: hops, agent: prompts.agentSocket), seconds: $0) }
            return try TransportService.handle(provider: provider, kept: kept, shared: shared) { () throws(SSHError) in
                try JumpRoute.connect(to: destination, through: hops, interaction: prompts)
            }
        } catch let error as SSHError {
            throw PluginError(message(error, host: name), code: Int32(error.kind == .refused || error.cause != nil ? TERMHOST_ERR_DENIED : TERMHOST_ERR_IO))
        } catch let error as PluginError {
            throw error
        } catch {
            throw PluginError("\(error)", code: Int32(TERMHOST_ERR_IO))
        }
    }

    /// What the user should run, then the refusal's own text: first, because an error crosses
    /// the ABI in TERMHOST_MESSAGE_SIZE bytes and OpenSSH's warnings alone can fill them.
    /// `who` names what never asks ("A tool", "A persistent session").
    static func message(_ error: SSHError, host name: String, who: String = "A tool") -> String {
        let shown = VisibleText.of(name)
        switch error.cause {
        case .unknownHostKey?:
            return "\(who) never accepts a host key: run 'termhost ssh \(shown)' on a terminal to review the key of '\(shown)' and save it, then try again.\n" + error.message
        case .changedHostKey?:
            return "The host key of '\(shown)' has changed and \(who.lowercased()) never accepts a changed key: fix the known_hosts line named below, then run 'termhost ssh \(shown)' on a terminal to review the new key.\n" + error.message
        case .credentials?:
            return "\(who) never asks for a password or passphrase: save the credential with 'termhost identities add NAME --password' (or --store-key FILE) and 'termhost hosts edit \(shown) --use-identity NAME', or add the key to ssh-agent.\n" + error.message
        case nil:
            return error.message
        }
    }
}
