import Foundation

extension Events {
    /// Subscribes to `SSHHostChange.topic`; `handler` runs on the publisher's thread (the SSH
    /// plugin's sync watch) and must not block. A payload that does not decode is ignored with
    /// a log line on `host`.
    public func onSSHHostChange(log host: PluginHost, _ handler: @escaping @Sendable (SSHHostChange) -> Void) throws(PluginError) -> Subscription {
        try subscribe(SSHHostChange.topic) { _, json in
            guard let change = SSHHostChange(json: json) else {
                host.log(.warning, "ignored a \(SSHHostChange.topic) event whose payload is not the documented object: \(VisibleText.of(String(json.prefix(200))))")
                return
            }
            handler(change)
        }
    }
}
