import Synchronization

/// termhost.daemon/1 (services/daemon.h): whether this process is the daemon, and, elsewhere,
/// what becomes of a command that asks to run there: the CLI runs the command the user typed
/// again in the daemon once it returned (`rerunning`); every other front end (`tools call`,
/// `call`, a test harness), and the CLI under `--in-process`, cannot.
public enum DaemonRole: Sendable {
    case daemon
    case cli(rerunning: Bool)
}

/// The scenes whose command asked for the daemon (require() in the CLI), for the CLI to run
/// again there. [any-thread]
public final class DaemonRequests: Sendable {
    private let scenes = Mutex<Set<UInt64>>([])

    func mark(_ scene: UInt64) { _ = scenes.withLock { $0.insert(scene) } }

    /// Whether the command that ran in scene asked to run in the daemon.
    public func asked(_ scene: UInt64) -> Bool { scenes.withLock { $0.contains(scene) } }
}
