import Foundation
import Glibc
import TermhostSDK

/// The one shared connection of every running rule of one host, and its recovery.
///
/// Design: states are idle (no connection, none wanted), connecting, connected, waiting for a
/// retry, and ended. A first connection that fails fails its rules (no rule has run yet, so
/// there is no intent to keep). Once connected, a loss keeps every rule's intent and retries
/// on the backoff schedule; authentication, trust or interaction failures (TERMHOST_ERR_DENIED:
/// recovery never prompts, it uses scene 0 so prompts fail closed) end recovery with the error.
/// Fields belong to the manager's queue except `current`, which the reactor reads.
final class HostLink: @unchecked Sendable {
    let host: String
    /// Blocking transport calls for this host, one at a time (the connection's executor is
    /// serial anyway), so a burst of streams never becomes a burst of threads. Submit with
    /// `call`, never directly: shutdown waits for these calls (see `inFlight`).
    private let calls: DispatchQueue
    /// Every transport call of every link of the manager, so shutdown can wait (bounded) for
    /// closes still on their way: the process must not exit while one is inside libssh2.
    private let inFlight: DispatchGroup
    var scene: UInt64
    var rules: [RuleRuntime] = []
    var connection: SSHTransport.Connection?
    var token: Unmanaged<LossToken>?
    /// Bumped for every connection, so a late loss report for an old one is ignored.
    var generation = 0
    var connecting = false
    var retry: DispatchWorkItem?
    var backoff = Backoff()
    var attempt = 0
    var connectedAt: Date?
    var everConnected = false

    private let lock = NSLock()
    private var snapshot: SSHTransport.Connection?

    init(host: String, scene: UInt64, inFlight: DispatchGroup) {
        self.host = host
        self.scene = scene
        self.inFlight = inFlight
        calls = DispatchQueue(label: "termhost.forwarding.link")
    }

    /// Runs a blocking transport call for this host, after those already submitted. [any-thread]
    func call(_ work: @escaping @Sendable () -> Void) {
        calls.async(group: inFlight, execute: work)
    }

    /// The live connection for new streams, or nil while there is none. [any-thread]
    var current: SSHTransport.Connection? {
        lock.lock()
        defer { lock.unlock() }
        return snapshot
    }

    func setCurrent(_ c: SSHTransport.Connection?) {
        lock.lock()
        snapshot = c
        lock.unlock()
    }
}

/// What `watch`'s on_lost gets as user data: which link and which connection of it.
final class LossToken: @unchecked Sendable {
    weak var manager: ForwardingManager?
    weak var link: HostLink?
    let generation: Int

    init(manager: ForwardingManager, link: HostLink, generation: Int) {
        self.manager = manager
        self.link = link
        self.generation = generation
    }

    /// Runs on the connection's executor: only hands the news to the manager's queue.
    static let onLost: SSHTransport.LostCallback = { user, reason in
        guard let user else { return }
        let token = Unmanaged<LossToken>.fromOpaque(user).takeUnretainedValue()
        let text = reason.map { String(cString: $0) } ?? "connection lost"
        guard let manager = token.manager, let link = token.link else { return }
        let generation = token.generation
        manager.queue.async { manager.lost(link, generation: generation, reason: text) }
    }
}

/// What a -R listener's on_accept gets as user data. Retained for the life of the process: a
/// callback may still be on its way when the rule stops.
final class RemoteAcceptContext: @unchecked Sendable {
    weak var manager: ForwardingManager?
    let runtime: RuleRuntime

    init(manager: ForwardingManager, runtime: RuleRuntime) {
        self.manager = manager
        self.runtime = runtime
    }

    /// Runs on the connection's executor: the target connect goes to a worker.
    static let onAccept: SSHTransport.AcceptCallback = { user, fd, _, _ in
        guard let user else { return }
        let context = Unmanaged<RemoteAcceptContext>.fromOpaque(user).takeUnretainedValue()
        guard let manager = context.manager else { Glibc.close(fd); return }
        manager.remoteAccepted(context.runtime, fd: fd)
    }
}
