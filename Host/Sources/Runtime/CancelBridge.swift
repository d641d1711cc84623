import CTermhost
import Foundation
import TermhostSDK

/// `termhost.cancel/1` (SDK/include/termhost/services/commands.h) over the runtime's
/// `CommandCancellation`. Added in ABI 1.2.
extension HostBridge {
    nonisolated(unsafe) static let cancelTable: UnsafeMutablePointer<termhost_host_cancel_t> = {
        let t = UnsafeMutablePointer<termhost_host_cancel_t>.allocate(capacity: 1)
        t.initialize(to: termhost_host_cancel_t(
            struct_size: UInt32(MemoryLayout<termhost_host_cancel_t>.size),
            is_cancelled: { host, scene in
                guard let host else { return 0 }
                return HostBridge.context(host).services.cancellation.isCancelled(scene) ? 1 : 0
            },
            on_cancel: { host, scene, handler, user, token, err in
                guard let host, let handler, let token else {
                    return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "on_cancel: NULL handler or token")
                }
                // The pointer travels as bits: it belongs to the plugin, which keeps it valid
                // until remove() returns.
                let userBits = UInt(bitPattern: user)
                token.pointee = HostBridge.context(host).services.cancellation.onCancel(scene: scene) { scene in
                    handler(UnsafeMutableRawPointer(bitPattern: userBits), scene)
                }
                return termhost_status(TERMHOST_OK)
            },
            remove: { host, token in
                guard let host else { return }
                HostBridge.context(host).services.cancellation.remove(token)
            }))
        return t
    }()
}
