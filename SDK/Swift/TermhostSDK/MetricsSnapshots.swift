import CTermhost

/// `termhost_metrics_snapshot_t` ("org.termhost.metrics.snapshot/1",
/// SDK/include/termhost/metrics/snapshot.h): read-only snapshots of what this process's metrics
/// samplers already know. Nothing here starts or steers sampling. Declare the service in
/// requiresServices and "org.termhost.metrics" in `after`. Every call may be made from any
/// thread and returns at once (it copies what the sampler holds).
public struct MetricsSnapshots: @unchecked Sendable {
    public let vtable: UnsafePointer<termhost_metrics_snapshot_t>

    /// The service, when the Metrics feature is active and provides it. [any-thread]
    public init?(host: PluginHost) {
        guard let raw = host.service(TERMHOST_METRICS_SNAPSHOT) else { return nil }
        vtable = raw.assumingMemoryBound(to: termhost_metrics_snapshot_t.self)
    }

    /// `list_hosts`: a JSON array of the host names that have a sampler in this process, sorted
    /// by name (`[]` when none). [any-thread]
    public func listHosts() throws(PluginError) -> String {
        String(decoding: try ByteSink.collect { vtable.pointee.list_hosts(ByteSink.sink, $0, $1) }, as: UTF8.self)
    }

    /// `get_snapshot`: the JSON snapshot of `host` (a monitor's host, as `termhost metrics list`
    /// shows it). TERMHOST_ERR_NOT_FOUND, naming the host, when no sampler for it runs in this
    /// process. [any-thread]
    public func snapshot(of host: String) throws(PluginError) -> String {
        String(decoding: try ByteSink.collect { vtable.pointee.get_snapshot(host, ByteSink.sink, $0, $1) }, as: UTF8.self)
    }
}
