import CTermhost
import Foundation
import MetricsCore
import TermhostSDK

/// "org.termhost.metrics.snapshot/1" (SDK/include/termhost/metrics/snapshot.h): read-only
/// JSON of what this process's samplers already hold. It never creates a sampler, changes
/// one, or waits for the network.
enum SnapshotService {
    nonisolated(unsafe) static let vtable: UnsafeMutablePointer<termhost_metrics_snapshot_t> = {
        let t = UnsafeMutablePointer<termhost_metrics_snapshot_t>.allocate(capacity: 1)
        t.initialize(to: termhost_metrics_snapshot_t(
            struct_size: UInt32(MemoryLayout<termhost_metrics_snapshot_t>.size),
            list_hosts: { sink, user, err in
                guard let sink else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "list_hosts: NULL sink") }
                let hosts = Samplers.all.map(\.host).sorted()
                deliver(JSON.array(hosts.map { .string($0) }).text, sink, user)
                return Int32(TERMHOST_OK)
            },
            get_snapshot: { host, sink, user, err in
                guard let host, let sink else { return termhostFail(err, TERMHOST_ERR_INVALID_ARGUMENT, "get_snapshot: NULL argument") }
                let name = String(cString: host)
                guard let sampler = Samplers.find(name) else {
                    return termhostFail(err, TERMHOST_ERR_NOT_FOUND, "no metrics sampler for '\(name)' in this process")
                }
                deliver(SnapshotJSON.render(sampler.report, now: Date().timeIntervalSince1970).text, sink, user)
                return Int32(TERMHOST_OK)
            }))
        return t
    }()

    static func deliver(_ text: String, _ sink: termhost_value_sink, _ user: UnsafeMutableRawPointer?) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { sink(user, $0.baseAddress, $0.count) }
    }
}
