/// A saved monitor: which host, where it sits in the list, whether it is paused, and its
/// sampling settings. Kept in the host store (collection "monitors", keyed by host).
/// Samples, states and connections are never stored.
struct Monitor: Codable, Equatable, Sendable {
    var host: String
    var order: Int
    var paused: Bool = false
    var interval: Int = 1
    var interfaces: [String]? = nil
    /// Counts `metrics resume`: a change tells running outputs (watch, serve, in any process)
    /// to retry the host now, even after "auth needed" or a host key failure.
    var resumes: Int? = nil
}
