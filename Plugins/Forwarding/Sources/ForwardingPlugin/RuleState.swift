import Foundation
import Synchronization
import TermhostSDK

/// What a running rule is doing, as operators see it.
enum RuleState: Equatable {
    case starting
    case active
    /// Transport lost; the next attempt to reconnect is at `next`.
    case reconnecting(attempt: Int, next: Date)
    /// The process expired in background: transport retired, intent kept until foreground.
    case paused
    case failed(String)
    case stopped

    /// `active (3 connections)`, `reconnecting (attempt 2 at 14:05:07)`, `failed: ...`.
    func text(connections: Int) -> String {
        switch self {
        case .starting: "starting"
        case .active: "active (\(connections) connection\(connections == 1 ? "" : "s"))"
        case .reconnecting(let attempt, let next):
            // A clock time, not "in N s": the status file is read later, by another process.
            "reconnecting (attempt \(attempt) at \(RuleState.clock(next)))"
        case .paused: "paused (process in background)"
        case .failed(let reason): "failed: \(reason)"
        case .stopped: "stopped"
        }
    }

    static func clock(_ date: Date) -> String {
        let f = DateFormatter()
        f.dateFormat = "HH:mm:ss"
        return f.string(from: date)
    }

    /// Whether the rule still means to run (explicit intent not yet ended).
    var hasIntent: Bool {
        switch self {
        case .failed, .stopped: false
        default: true
        }
    }
}

/// One rule while `forward run` (or the daemon's running intent) runs it. State fields belong
/// to the manager's queue; the listener, the pumps and the splices to the reactor thread;
/// `connections` is read from anywhere.
final class RuleRuntime: @unchecked Sendable {
    let rule: ForwardRule
    /// Whose rule it is: the scene of the `forward run` that started it, 0 for the daemon's intent.
    let scene: UInt64
    var state: RuleState = .starting                 // manager queue
    var hasRun = false                               // manager queue: was active at least once
    var listener: LocalListener?                     // set on the manager queue, used on the reactor
    var remotePort: Int?                             // manager queue: -R port on the current connection
    var pumps: [ObjectIdentifier: Pump] = [:]        // reactor
    /// -L streams the SSH plugin moves itself (splice_direct_tcpip), by stream id.
    var splices: [UInt64: SSHTransport.Connection] = [:]  // reactor
    /// -D clients still in their SOCKS handshake (bounded, see Socks5Handshake).
    let pending = PendingHandshakes()                 // reactor
    /// SOCKS clients' handshake endings, logged at most once a second.
    let handshakeLog = LogThrottle()                  // reactor
    let connections = Atomic<Int>(0)

    /// Restored by the daemon at its start: a first connection that fails is retried, not final.
    let keepsTrying: Bool

    init(_ rule: ForwardRule, scene: UInt64, keepsTrying: Bool = false) {
        self.rule = rule
        self.scene = scene
        self.keepsTrying = keepsTrying
    }

    /// The name comes from the store or the command line: shown, never obeyed, on a terminal.
    var label: String { "forward '\(VisibleText.of(rule.name))'" }
}

/// Recovery delays: 1, 2, 5, 10, then 30 s for every further attempt; back to the start once
/// a connection has stayed up for 60 s.
struct Backoff {
    static let delays: [Double] = [1, 2, 5, 10, 30]
    static let stableAfter: Double = 60
    private(set) var index = 0

    mutating func next() -> Double {
        let d = Backoff.delays[min(index, Backoff.delays.count - 1)]
        index += 1
        return d
    }

    mutating func reset() { index = 0 }
}
