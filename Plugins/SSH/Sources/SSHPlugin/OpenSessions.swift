import Foundation
import Synchronization
import TermhostSDK

/// Sessions that authenticated and have not ended yet. Each ends exactly once: when its
/// command returns, or when the feature shuts down first (SIGINT, SIGTERM, SIGHUP), so the
/// `session.ended` event and the history row are never lost.
enum OpenSessions {
    struct Session {
        let host: String
        let user: String
        let started: Double
        let vault: Vault
        let pluginHost: PluginHost
    }

    private static let open = Mutex<(next: Int, sessions: [Int: Session])>((0, [:]))

    static func add(_ s: Session) -> Int {
        open.withLock { state in
            state.next += 1
            state.sessions[state.next] = s
            return state.next
        }
    }

    static func end(_ token: Int, status: Int32) {
        guard let s = open.withLock({ $0.sessions.removeValue(forKey: token) }) else { return }
        finish(s, status: status)
    }

    static func endAll(status: Int32) {
        let all = open.withLock { state in
            defer { state.sessions = [:] }
            return Array(state.sessions.values)
        }
        for s in all { finish(s, status: status) }
    }

    private static func finish(_ s: Session, status: Int32) {
        try? s.pluginHost.events?.publish("org.termhost.ssh.session.ended",
                                          json: "{\"host\":\(JSONText.quoted(s.host)),\"status\":\(status)}")
        try? ConnectionHistory(store: s.vault.store).record(.init(host: s.host, user: s.user, started: s.started,
                                                                  ended: Date().timeIntervalSince1970, status: status))
    }
}
