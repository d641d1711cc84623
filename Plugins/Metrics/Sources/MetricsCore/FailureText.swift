/// Maps the SSH transport's errors to a monitor's failure: what went wrong, in words the user
/// can act on. Pure text rules, so they are tested without a server.
public enum FailureText {
    /// open() failed. denied: the transport said TERMHOST_ERR_DENIED (a refused host key or
    /// refused credentials: retrying cannot help until the user acts).
    public static func open(denied: Bool, message: String, host: String, code: Int32 = 0) -> MonitorState.Failure {
        let lines = message.split(separator: "\n").map(String.init)
        let summary = lines.suffix(2).joined(separator: " ")
        // A host key that is not known yet, with nobody to ask (scene 0: watch, serve): not a
        // changed key, and not something a retry fixes. Checked before "changed" because the
        // SSH plugin's text for it also ends in "Host key verification failed".
        if message.contains("can't be established") || message.contains("offers no way to ask") {
            let fingerprint = lines.first { $0.contains("key fingerprint is") }.map { " (\($0.trimmingSuffix("."))" + ")" } ?? ""
            return .hostKeyUnknown("\(host) is not in known_hosts yet\(fingerprint)")
        }
        if denied {
            if message.contains("Host key verification failed") || message.contains("host key")
                || message.contains("HOST IDENTIFICATION HAS CHANGED") || message.contains("REVOKED HOST KEY") {
                // The SSH plugin's warning is long (and cut at the error's fixed size): keep
                // its verdict and the offending known_hosts line when they made it through.
                let offending = lines.first { $0.hasPrefix("Offending") }.map { " (\($0))" } ?? ""
                if message.contains("HAS CHANGED") || message.contains("has changed") {
                    return .hostKeyChanged("the server's host key does not match the one in known_hosts\(offending)")
                }
                if message.contains("REVOKED") {
                    return .hostKeyChanged("the server's host key is marked as revoked in known_hosts")
                }
                return .hostKeyChanged(lines.last { $0.contains("Host key verification failed") } ?? summary)
            }
            return .authNeeded(summary)
        }
        return .unreachable(summary.isEmpty ? "error \(code)" : summary)
    }

    /// open_exec() failed. The server refusing the channel or the command (ForceCommand
    /// setups, MaxSessions 0, a restricted account) is "command failed"; anything else (the
    /// connection died) is "unreachable".
    public static func exec(message: String) -> MonitorState.Failure {
        let refused = ["refused to run the command", "prohibited", "Channel open failure", "channel open failure"]
        if refused.contains(where: message.contains) {
            return .commandFailed(message.isEmpty ? "the server refused the sampling command" : message)
        }
        return .unreachable(message.isEmpty ? "the connection failed" : message)
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}
