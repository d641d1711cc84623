import CTermhost

extension PluginHost {
    /// `termhost_host_daemon_t.is_daemon`: whether this process is `termhost daemon`; false on
    /// a host before ABI 1.6, which has no daemon.
    public var isDaemon: Bool {
        guard let service = typed(TERMHOST_SERVICE_DAEMON, termhost_host_daemon_t.self) else { return false }
        return service.pointee.is_daemon(raw) == 1
    }

    /// What `requireDaemon` answered.
    public enum DaemonRequirement: Sendable, Equatable {
        /// This is the daemon: go on.
        case here
        /// The host runs the command again in the daemon once it returns: return at once and
        /// print nothing.
        case hostRunsItThere
        /// It cannot run there from here; the reason is for the user.
        case refused(String)
    }

    /// `termhost_host_daemon_t.require`: a command that must run in the daemon calls this first.
    public func requireDaemon(scene: UInt64) -> DaemonRequirement {
        guard let service = typed(TERMHOST_SERVICE_DAEMON, termhost_host_daemon_t.self) else {
            return .refused("this runs in the daemon, and this Termhost host has none (it is older than ABI 1.6)")
        }
        var reruns: Int32 = 0
        var err = termhostEmptyError()
        if service.pointee.require(raw, scene, &reruns, &err) == Int32(TERMHOST_OK) { return .here }
        return reruns == 1 ? .hostRunsItThere : .refused(termhostErrorMessage(err))
    }
}

extension CommandInvocation {
    /// `requireDaemon` for this command, answered as every command answers it: nil when this is
    /// the daemon (go on); otherwise the status to return at once: 0 when the host runs the
    /// command again there, 1 once `what: why` is printed when it cannot.
    public func requireDaemon(_ host: PluginHost, _ what: String) -> Int32? {
        switch host.requireDaemon(scene: scene) {
        case .here: return nil
        case .hostRunsItThere: return 0
        case .refused(let why):
            printError("\(what): \(why)")
            return 1
        }
    }
}
