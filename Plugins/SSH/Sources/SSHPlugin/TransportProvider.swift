import CTermhost
import TermhostSDK

/// One SSH feature instance's side of the transport service (SDK/include/termhost/host.h,
/// "Provider context"): its own copy of the vtable, whose `context` points back here, so every
/// entry point finds the instance it belongs to instead of a global. Two instances (a test
/// harness beside the real one) each serve connections with their own host, vault and prompts.
final class TransportProvider: @unchecked Sendable {
    /// The SSH plugin's host: the vault (store) and prompts of connections this instance opens.
    let host: PluginHost
    /// The table get_service hands out for this instance; valid until the instance is freed
    /// (feature.h: "until destroy()").
    let table: UnsafeMutablePointer<termhost_ssh_transport_t>

    init(host: PluginHost) {
        self.host = host
        table = .allocate(capacity: 1)
        table.initialize(to: TransportService.template)
        table.pointee.context = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        table.deinitialize(count: 1)
        table.deallocate()
    }

    /// The instance behind a table this plugin handed out; nil for a table too old to carry a
    /// context (it is not ours) or one without it.
    static func of(_ table: UnsafeRawPointer?) -> TransportProvider? {
        guard let t = table?.assumingMemoryBound(to: termhost_ssh_transport_t.self),
              let context = TermhostStruct.member(t, \.context) else { return nil }
        return Unmanaged<TransportProvider>.fromOpaque(context).takeUnretainedValue()
    }

    /// The instance serving `caller`: open() takes only the caller's host, so it asks the host
    /// which table the caller would get for the service, and reads that table's context.
    static func serving(_ caller: UnsafePointer<termhost_host_t>) -> TransportProvider? {
        guard let lookup = TermhostStruct.member(caller, \.get_service) else { return nil }
        return of(lookup(caller, TERMHOST_SSH_TRANSPORT))
    }
}
