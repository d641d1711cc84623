/// The phases of NOTES §5. A scene is active or in background; the process phase is derived:
/// background only when every tracked scene is (an empty set of scenes is not "all
/// background"), expired when the background grace ran out, terminating once shutdown began.
public enum Phase: String, Sendable, Equatable, CustomStringConvertible {
    case active, background, expired, terminating
    public var description: String { rawValue }
}

/// What a lifecycle manager reports to the rest of the host (events, logs).
public enum LifecycleEvent: Sendable, Equatable {
    case phaseChanged(Phase)
    case sceneAttached(UInt64)
    case sceneDetached(UInt64)
    case workspacePublished(scene: UInt64, workspace: UInt64, index: Int)
    case workspaceClosed(scene: UInt64, workspace: UInt64)
    case featureFailed(String, String)

    /// The host event topic and JSON payload (see services/events.h).
    public var topicAndPayload: (String, String) {
        switch self {
        case .phaseChanged(let p): ("termhost.phase.changed", "{\"phase\":\"\(p)\"}")
        case .sceneAttached(let s): ("termhost.scene.attached", "{\"scene\":\(s)}")
        case .sceneDetached(let s): ("termhost.scene.detached", "{\"scene\":\(s)}")
        case .workspacePublished(let s, let w, let i):
            ("termhost.workspace.published", "{\"scene\":\(s),\"workspace\":\(w),\"index\":\(i)}")
        case .workspaceClosed(let s, let w): ("termhost.workspace.closed", "{\"scene\":\(s),\"workspace\":\(w)}")
        case .featureFailed(let id, _): ("termhost.feature.failed", "{\"feature\":\"\(id)\"}")
        }
    }
}

/// How a shutdown ended: `abandoned` lists the features whose shutdown callback had not
/// returned when the bound expired (at most one per bounded run: callbacks run one after the
/// other), the culprits; `notShutDown` the features after it that were therefore never called
/// (not to blame, and not destroyed either). Neither kind is destroyed.
public struct ShutdownOutcome: Sendable, Equatable {
    public let boundExpired: Bool
    public let abandoned: [String]
    public let seconds: Double
    public var notShutDown: [String] = []
    /// Calls (commands) that had not returned when destroy() was due, even after being asked
    /// to stop: their instances are not destroyed, their plugins get no deinit().
    public var stillInCall: [CallsInProgress.Call] = []
}
