import CTermhost
import TermhostSDK

/// The transport's opens (transport.h: open, open_saved, open_with): one path, told apart by
/// flags. TERMHOST_SSH_OPEN_SAVED is open_saved's way (a saved host's name, never a prompt);
/// TERMHOST_SSH_OPEN_SHARED lets the daemon join a live connection opened the same way to the
/// same destination (TransportLink).
extension TransportService {
    static let knownOpenFlags = UInt32(TERMHOST_SSH_OPEN_SAVED) | UInt32(TERMHOST_SSH_OPEN_SHARED)

    static func open(_ caller: UnsafePointer<termhost_host_t>?, scene: termhost_scene_id, _ destination: UnsafePointer<CChar>?, flags: UInt32,
                     _ out: UnsafeMutablePointer<OpaquePointer?>?, _ err: UnsafeMutablePointer<termhost_error_t>?, entry: String) -> termhost_status {
        guard let caller, let destination, let out else {
            return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "\(entry): NULL caller, destination or out (caller is your plugin's termhost_host_t)")
        }
        guard flags & ~knownOpenFlags == 0 else {
            return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "\(entry): unknown flags 0x\(String(flags & ~knownOpenFlags, radix: 16))")
        }
        // The caller's host says which instance serves it: no global holds ours.
        guard let provider = TransportProvider.serving(caller) else {
            return termhostFail(err, TERMHOST_ERR_UNSUPPORTED,
                                "\(entry): the SSH feature is not active for the calling plugin (the host offers it no \(TERMHOST_SSH_TRANSPORT))")
        }
        let shared = flags & UInt32(TERMHOST_SSH_OPEN_SHARED) != 0
        let target = String(cString: destination)
        if flags & UInt32(TERMHOST_SSH_OPEN_SAVED) != 0 {
            do throws(PluginError) {
                out.pointee = handles.insert(try UnattendedConnect.handle(target, provider: provider, shared: shared))
                return Int32(TERMHOST_OK)
            } catch {
                return termhostFail(err, Int(error.code), error.message)
            }
        }
        let host = provider.host
        guard let store = host.store else {
            return termhostFail(err, TERMHOST_ERR_UNSUPPORTED, "the SSH feature is not active: the host store is unavailable")
        }
        do {
            let vault = Vault(store: store)
            guard let resolved = try vault.resolve(target) else {
                return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "'\(VisibleText.of(target))' is neither a saved host nor user@host[:port]")
            }
            let hops = try JumpRoute.hops(to: resolved, extra: [], vault: vault)
            let prompts = ConnectionPrompts(host: host, scene: scene)
            // In the daemon, a connection a command left to its destination is used again
            // (ConnectionPool), or a live one joined (shared); closed, this one is kept too.
            let kept = try ConnectionPool.keepSeconds(host).map { (key: ConnectionPool.key(resolved, hops: hops, agent: prompts.agentSocket), seconds: $0) }
            let c = try handle(provider: provider, kept: kept, shared: shared) { () throws(SSHError) in
                try JumpRoute.connect(to: resolved, through: hops, interaction: prompts)
            }
            out.pointee = handles.insert(c)
            return Int32(TERMHOST_OK)
        } catch let e as SSHError {
            return termhostFail(err, Int(e.kind == .refused ? TERMHOST_ERR_DENIED : TERMHOST_ERR_IO), e.message)
        } catch {
            return termhostFail(err, TERMHOST_ERR_IO, "\(error)")
        }
    }
}
