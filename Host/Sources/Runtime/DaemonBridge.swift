import CTermhost
import TermhostSDK

/// termhost.daemon/1 (services/daemon.h), from HostServices.daemonRole.
enum DaemonBridge {
    nonisolated(unsafe) static let table: UnsafeMutablePointer<termhost_host_daemon_t> = {
        let t = UnsafeMutablePointer<termhost_host_daemon_t>.allocate(capacity: 1)
        t.initialize(to: termhost_host_daemon_t(
            struct_size: UInt32(MemoryLayout<termhost_host_daemon_t>.size),
            is_daemon: { host in
                guard let host, case .daemon = HostBridge.context(host).services.daemonRole else { return 0 }
                return 1
            },
            require: { host, scene, reruns, err in
                guard let host else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "require: host is NULL") }
                guard let reruns else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "require: host_reruns is NULL") }
                reruns.pointee = 0
                let services = HostBridge.context(host).services
                switch services.daemonRole {
                case .daemon:
                    return termhost_status(TERMHOST_OK)
                case .cli(rerunning: false):
                    return termhostFail(err, TERMHOST_ERR_UNSUPPORTED,
                                        "this runs only in the daemon: type it as a command of its own, without --in-process")
                case .cli(rerunning: true):
                    // Only the command the user typed can be run again there: a nested one's
                    // caller would run twice.
                    switch CommandDepth.current {
                    case 1: break
                    case 0: return termhostFail(err, TERMHOST_ERR_UNSUPPORTED, "require: called outside a command (only run_command may ask)")
                    default:
                        return termhostFail(err, TERMHOST_ERR_UNSUPPORTED,
                                            "this runs only in the daemon, and cannot be run there from inside another command (run it on its own)")
                    }
                    services.daemonRequests.mark(scene)
                    reruns.pointee = 1
                    return termhostFail(err, TERMHOST_ERR_UNSUPPORTED, "this runs in the daemon: the host runs it there")
                }
            }))
        return t
    }()
}
