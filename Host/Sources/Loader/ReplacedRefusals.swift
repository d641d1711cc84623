/// A plugin refused in one directory (unsafe permissions, a bad manifest, a failed probe) while a
/// copy with the same ID from a later directory of the search path loads instead. The copy is
/// what the search path says to use, but the user meant the first one: it is said on every
/// command's stderr and in `termhost doctor`, never left to be found.
public enum ReplacedRefusals {
    public static func lines(_ records: [PluginRecord]) -> [String] {
        var loaded: [String: String] = [:]
        for r in records where r.failure == nil {
            if let id = r.manifest?.id, loaded[id] == nil { loaded[id] = r.directory }
        }
        return records.compactMap { r in
            guard let failure = r.failure, let id = r.manifest?.id, let other = loaded[id], other != r.directory else { return nil }
            switch failure {
            case .shadowed, .disabledByRegistry, .thirdPartyInSafeMode, .notInPluginSet: return nil   // not refused for what it is
            default: return "plugin '\(id)' in \(r.directory) was refused (\(failure)); the copy in \(other) is loaded instead"
            }
        }
    }
}
