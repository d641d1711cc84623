/// How a run ended, or that it has not. Stored with the run; `termhost ask` maps it to its exit
/// status.
///
/// Design: a run is `running` from its first store write until one of the four ends is written
/// in the same transaction as its last event. A run found `running` when the plugin starts, whose
/// process is gone, crashed (or was killed): it becomes `interrupted` and is never resumed by
/// itself, because resuming would replay a model step whose tool calls may already have run.
public enum RunState: String, Sendable, Equatable, CaseIterable {
    case running
    /// The model finished its answer.
    case finished
    /// The user stopped it (Ctrl-C) or the process shut down (SIGTERM, SIGHUP).
    case stopped
    /// A provider error, a store error, or the step limit.
    case failed
    /// Found running after its process died.
    case interrupted

    /// `termhost ask`'s exit status for a run that ended this way.
    public var exitStatus: Int32 {
        switch self {
        case .finished: 0
        case .stopped: 130
        case .running, .failed, .interrupted: 1
        }
    }
}
