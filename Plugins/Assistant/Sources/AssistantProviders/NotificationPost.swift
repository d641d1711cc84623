/// A POST that is no model request: the approval notification hook's (ntfy and alike). The
/// same libcurl transfer, with short timeouts and a small answer cap, the answer's body unread.
public enum NotificationPost {
    public static let timeouts = HTTPTimeouts(connectSeconds: 10, idleSeconds: 10, totalSeconds: 20)

    /// nil once the server took it (2xx); otherwise why not, for the log.
    public static func send(url: String, headers: [String], body: String) -> String? {
        do throws(HTTPTransferFailure) {
            let head = try HTTPTransfer.post(url: url, headers: headers, body: body, timeouts: timeouts, maxBytes: 64 * 1024,
                                             isCancelled: { false }, sink: { _ in })
            return (200..<300).contains(head.status) ? nil : "the server answered HTTP \(head.status)"
        } catch {
            switch error {
            case .transport(let reason): return reason
            case .cancelled: return "cancelled"
            case .tooLarge(let limit): return "the answer was larger than \(limit) bytes"
            case .sink(let e): return "\(e)"
            }
        }
    }
}
