import TermhostSDK

/// The `interval` setting of org.termhost.sync (operator policy, or a user's config where the
/// policy lets users override it): whole seconds between the syncs a long-running process does
/// in background; 0 or "off" for none. Checked where it enters, refused by name.
enum SyncInterval {
    static let key = "interval"
    static let bounds = 0...86400
    static let defaultSeconds = 60
    /// Seconds a process lives before its first sync (or the interval, when shorter): a short
    /// command (`termhost hosts list`, tenths of a second) ends long before, so it never pays
    /// for a sync, while a session, a forward or a watch syncs soon after it starts.
    static let firstDelay = 5

    /// Seconds between syncs; nil when off.
    static func read(_ host: PluginHost) throws(PluginError) -> Int? {
        guard let text = try host.setting(feature: "org.termhost.sync", key: key) else { return defaultSeconds }
        return try parse(text)
    }

    /// `text`: the setting's JSON value.
    static func parse(_ text: String) throws(PluginError) -> Int? {
        if text == "\"off\"" { return nil }
        guard let n = Int(text), bounds.contains(n) else {
            let error = NumberOutOfRange(name: "\(key) (setting of org.termhost.sync)", text: text,
                                         expected: "a whole number of seconds from \(bounds.lowerBound) to \(bounds.upperBound), or \"off\"")
            throw PluginError(error.description)
        }
        return n == 0 ? nil : n
    }
}
